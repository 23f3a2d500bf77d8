package controller

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/internal/testobj"
)

// Every request two replicas make in a minute of work is one Manager.Permissions lists, so
// that the roles rbac.Manifest writes from it, and the start-up check, cover it: informers,
// events, the Lease of leader election (the warm standby watches it: a role without watch
// left hand-off to polling, with a 403 every 2 s at debug level) and the member Leases of a
// sharding ring.
func TestPermissionsCoverEveryRequest(t *testing.T) {
	for _, mode := range []string{"leader-election", "sharding"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newTestServerWithOptions(t, apitest.Options{InMemory: true})
				if err := srv.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets",
					Namespaced: true, StatusSubresource: true}); err != nil {
					t.Fatal(err)
				}
				reg := testobj.NewRegistry()
				reconciled := make(chan Request, 100)
				var perms []rbac.Rule
				mk := func(who string) *Manager {
					opts := ManagerOptions{Kinds: reg, LeaderElectionIdentity: who}
					if mode == "sharding" {
						opts.Sharding = ShardingOptions{Ring: "widgets", Namespace: "kube-system"}
					} else {
						opts.LeaderElection, opts.LeaderElectionID, opts.LeaderElectionNamespace = true, "widgets", "kube-system"
					}
					m := newManager(t, srv, opts)
					rec := m.EventRecorderFor("widgets")
					widgets := client.TypedFor[*testobj.Widget](m.Client())
					err := NewBuilder(m, "widgets").
						For(Primary[*testobj.Widget]()).
						Owns(Owned[*testobj.ConfigMap]()).
						Watches(Watched(EnqueueRequestForObject[*testobj.Pod]())).
						WithOptions(Options{Logger: quiet, Sharded: mode == "sharding"}).
						Complete(ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
							w, err := widgets.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
							if err != nil {
								return Result{}, err
							}
							rec.Event(w, events.Normal, "Seen", "reconciled") // a create, then a patch of the count
							reconciled <- req
							return Result{RequeueAfter: 10 * time.Second}, nil
						}))
					if err != nil {
						t.Fatal(err)
					}
					perms = m.Permissions()
					return m
				}
				stopA, _ := startManager(t, mk("a"))
				stopB, _ := startManager(t, mk("b"))
				if _, err := srv.Create("widgets", widget("default", "w")); err != nil {
					t.Fatal(err)
				}
				<-reconciled
				time.Sleep(time.Minute) // renewals, a standby's watch of the Lease, events' counts
				for _, stop := range []func() error{stopA, stopB} {
					if err := stop(); err != nil {
						t.Fatal(err)
					}
				}
				checked := map[string]bool{}
				for _, r := range srv.Requests() {
					if r.Resource == "" || r.Resource == "selfsubjectaccessreviews.authorization.k8s.io" {
						continue // discovery, and the start-up check itself: every user may
					}
					resource, group, _ := strings.Cut(r.Resource, ".")
					if r.Subresource != "" {
						resource += "/" + r.Subresource
					}
					what := string(r.Verb) + " " + r.Resource + "/" + r.Subresource + " in " + r.Namespace
					if !checked[what] && !rbac.Allows(perms, string(r.Verb), group, resource, r.Namespace) {
						t.Errorf("%s %s (%s) is not in Manager.Permissions %v", r.Method, r.Path, what, perms)
					}
					checked[what] = true
				}
				wants := []string{"create events/ in default", "patch events/ in default", "list leases.coordination.k8s.io/ in kube-system"}
				if mode == "leader-election" {
					wants = append(wants[:2], "watch leases.coordination.k8s.io/ in kube-system")
				}
				for _, want := range wants {
					if !checked[want] {
						t.Errorf("no request %q: the test did not exercise it (requests: %v)", want, checked)
					}
				}
			})
		})
	}
}
