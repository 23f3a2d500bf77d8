package explore_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

// The corpus's controllers: each has a bug of one of Sieve's kinds, modelled on a shape
// Sieve (OSDI '22) or Acto (SOSP '23) reported in real operators, and its fixed version
// (fixed true). Parents are ConfigMaps labelled role=parent; what the users set is in their
// data, what the controller records in their annotations.

var isParent = controller.NewPredicateFuncs(func(c *ConfigMap) bool { return c.Labels["role"] == "parent" })

func parentWith(name string, data map[string]any) map[string]any {
	o := parent(name)
	o["data"] = data
	return o
}

// setKeys sets keys of the object's data, keeping the others.
func setKeys(kv ...string) func(apitest.Object) {
	return func(o apitest.Object) {
		d, _ := o["data"].(map[string]any)
		if d == nil {
			d = map[string]any{}
			o["data"] = d
		}
		for i := 0; i+1 < len(kv); i += 2 {
			d[kv[i]] = kv[i+1]
		}
	}
}

func ignoreNotFound(err error) error {
	if meta.IsNotFound(err) {
		return nil
	}
	return err
}

func ignoreExists(err error) error {
	if meta.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func annotate(o *ConfigMap, kv ...string) {
	if o.Annotations == nil {
		o.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Annotations[kv[i]] = kv[i+1]
	}
}

func childCM(namespace, name, parentName string, data map[string]string) *ConfigMap {
	return &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: namespace, Name: name,
		Labels: map[string]string{"role": "child", "parent": parentName}}, Data: data}
}

type reconcileFunc = func(ctx context.Context, req controller.Request) (controller.Result, error)

// onParentsAndChildren is onParents, and a child's events reconcile its parent.
func onParentsAndChildren(name string, build func(mgr *controller.Manager, cms *client.Typed[*ConfigMap]) reconcileFunc) func(*controller.Manager) error {
	return func(mgr *controller.Manager) error {
		cms := client.TypedFor[*ConfigMap](mgr.Client())
		toParent := controller.EnqueueRequestsFromMapFunc(func(_ context.Context, c *ConfigMap) []controller.Request {
			if p := c.Labels["parent"]; p != "" {
				return []controller.Request{{Namespace: c.Namespace, Name: p}}
			}
			return nil
		})
		return controller.NewBuilder(mgr, name).For(controller.Primary[*ConfigMap](isParent)).
			Watches(controller.Watched[*ConfigMap](toParent)).
			Complete(controller.ReconcilerFunc(build(mgr, cms)))
	}
}

func onParents(name string, build func(mgr *controller.Manager, cms *client.Typed[*ConfigMap]) reconcileFunc) func(*controller.Manager) error {
	return func(mgr *controller.Manager) error {
		cms := client.TypedFor[*ConfigMap](mgr.Client())
		return controller.NewBuilder(mgr, name).For(controller.Primary[*ConfigMap](isParent)).
			Complete(controller.ReconcilerFunc(build(mgr, cms)))
	}
}

// leakOnCrash (intermediate; Sieve's "resource leaked after a crash between creating it
// and recording it"): it creates the child with a generated name, then records the name
// in the parent. A crash between the two writes leaves a child nobody records, and the
// restarted process makes another. Fixed: the child's name is derived from the parent's, so
// a second create is AlreadyExists.
func leakOnCrash(fixed bool) func(*controller.Manager) error {
	return onParents("leak", func(_ *controller.Manager, cms *client.Typed[*ConfigMap]) reconcileFunc {
		return func(ctx context.Context, req controller.Request) (controller.Result, error) {
			p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if err != nil || p.Annotations["child"] != "" {
				return controller.Result{}, ignoreNotFound(err)
			}
			c := childCM(p.Namespace, "", p.Name, nil)
			if fixed {
				c.Name = p.Name + "-child"
			} else {
				c.GenerateName = p.Name + "-"
			}
			made, err := cms.Create(ctx, c, client.CreateOptions{})
			if fixed {
				err = ignoreExists(err)
			}
			if err != nil {
				return controller.Result{}, err
			}
			name := c.Name
			if name == "" {
				name = made.Name
			}
			annotate(p, "child", name)
			_, err = cms.Update(ctx, p, client.UpdateOptions{})
			return controller.Result{}, err
		}
	})
}

// stuckUpgrade (intermediate; Sieve's "an operator cannot resume an upgrade it was killed
// in"): an upgrade marks the parent upgrading, creates the new version's child, deletes
// the old one's, and marks it ready. The buggy version takes "upgrading" for the work of a
// worker still running and waits for it: after a crash it waits forever. Fixed: it resumes
// (every step is idempotent).
func stuckUpgrade(fixed bool) func(*controller.Manager) error {
	return onParentsAndChildren("upgrade", func(_ *controller.Manager, cms *client.Typed[*ConfigMap]) reconcileFunc {
		return func(ctx context.Context, req controller.Request) (controller.Result, error) {
			p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if err != nil {
				return controller.Result{}, ignoreNotFound(err)
			}
			want, cur, phase := p.Data["version"], p.Annotations["current"], p.Annotations["phase"]
			if want == "" || cur == want && phase == "ready" {
				return controller.Result{}, nil
			}
			if phase == "upgrading" && !fixed {
				return controller.Result{}, nil // the bug: nobody is upgrading any more
			}
			if fixed {
				// A stale cache may hold an older version: it creates and deletes children
				// for the version the server holds only.
				res, err := cms.Resource()
				if err != nil {
					return controller.Result{}, err
				}
				live, err := res.Namespace(p.Namespace).Get(ctx, p.Name, apiclient.GetOptions{})
				if err != nil || live.ResourceVersion != p.ResourceVersion {
					return controller.Result{Requeue: true}, ignoreNotFound(err)
				}
			}
			if cur != "" && phase != "upgrading" {
				annotate(p, "phase", "upgrading")
				if p, err = cms.Update(ctx, p, client.UpdateOptions{}); err != nil {
					return controller.Result{}, err
				}
			}
			child := childCM(p.Namespace, p.Name+"-v"+want, p.Name, map[string]string{"version": want})
			if _, err := cms.Create(ctx, child, client.CreateOptions{}); ignoreExists(err) != nil {
				return controller.Result{}, err
			}
			if cur != "" && cur != want {
				old := childCM(p.Namespace, p.Name+"-v"+cur, p.Name, nil)
				if err := cms.Delete(ctx, old, client.DeleteOptions{}); ignoreNotFound(err) != nil {
					return controller.Result{}, err
				}
			}
			if fixed {
				// Any other version's child: one a crash before the first record left.
				kids, err := cms.List(ctx, client.ListOptions{Namespace: p.Namespace, LabelSelector: labels.SelectorFromSet(map[string]string{"parent": p.Name})})
				if err != nil {
					return controller.Result{}, err
				}
				for _, k := range kids {
					if k.Name != child.Name {
						uid := k.UID
						err := cms.Delete(ctx, k, client.DeleteOptions{Preconditions: &client.Preconditions{UID: &uid}})
						if err != nil && !meta.IsNotFound(err) && !meta.IsConflict(err) {
							return controller.Result{}, err
						}
					}
				}
			}
			annotate(p, "current", want, "phase", "ready")
			_, err = cms.Update(ctx, p, client.UpdateOptions{})
			return controller.Result{}, err
		}
	})
}

const registryFinalizer = "corpus.informerkit.dev/registry"

// finalizerFirst (intermediate; Sieve's "finalizer removed before the cleanup it guards"):
// each parent has an entry in the ConfigMap "registry", guarded by a finalizer. The buggy
// version removes the finalizer, then the entry: a crash between the two leaks the entry,
// as the parent is gone and nothing reconciles it again. Fixed: the entry first.
func finalizerFirst(fixed bool) func(*controller.Manager) error {
	return onParents("registry", func(_ *controller.Manager, cms *client.Typed[*ConfigMap]) reconcileFunc {
		register := func(ctx context.Context, ns, name string, add bool) error {
			reg, err := cms.Get(ctx, ns, "registry", client.GetOptions{})
			if !add && fixed {
				// A stale cache may not show the entry yet: what lets the parent go is
				// read from the server.
				res, rerr := cms.Resource()
				if rerr != nil {
					return rerr
				}
				reg, err = res.Namespace(ns).Get(ctx, "registry", apiclient.GetOptions{})
			}
			switch {
			case meta.IsNotFound(err) && add:
				reg = &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: ns, Name: "registry"}, Data: map[string]string{name: "registered"}}
				_, err = cms.Create(ctx, reg, client.CreateOptions{})
				return err
			case err != nil:
				return ignoreNotFound(err)
			case add && reg.Data[name] == "":
				if reg.Data == nil {
					reg.Data = map[string]string{}
				}
				reg.Data[name] = "registered"
			case !add && reg.Data[name] != "":
				delete(reg.Data, name)
			default:
				return nil
			}
			_, err = cms.Update(ctx, reg, client.UpdateOptions{})
			return err
		}
		return func(ctx context.Context, req controller.Request) (controller.Result, error) {
			p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if err != nil {
				return controller.Result{}, ignoreNotFound(err)
			}
			if p.DeletionTimestamp == nil {
				if controllerutil.AddFinalizer(p, registryFinalizer) {
					if _, err := cms.Update(ctx, p, client.UpdateOptions{}); err != nil {
						return controller.Result{}, err
					}
				}
				return controller.Result{}, register(ctx, p.Namespace, p.Name, true)
			}
			if !controllerutil.ContainsFinalizer(p, registryFinalizer) {
				return controller.Result{}, nil
			}
			if fixed {
				if err := register(ctx, p.Namespace, p.Name, false); err != nil {
					return controller.Result{}, err
				}
			}
			controllerutil.RemoveFinalizer(p, registryFinalizer)
			if _, err := cms.Update(ctx, p, client.UpdateOptions{}); ignoreNotFound(err) != nil {
				return controller.Result{}, err
			}
			if !fixed {
				return controller.Result{}, register(ctx, p.Namespace, p.Name, false)
			}
			return controller.Result{}, nil
		}
	})
}

// readyBeforeChild (intermediate; Acto's "status says done before the work is"): the buggy
// version marks the parent ready, then creates its child; a crash between the two leaves
// a ready parent without a child, which the restarted process trusts. Fixed: the child
// first, then the mark.
func readyBeforeChild(fixed bool) func(*controller.Manager) error {
	return onParents("ready", func(_ *controller.Manager, cms *client.Typed[*ConfigMap]) reconcileFunc {
		return func(ctx context.Context, req controller.Request) (controller.Result, error) {
			p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if err != nil || p.Annotations["ready"] == "true" {
				return controller.Result{}, ignoreNotFound(err)
			}
			makeChild := func() error {
				_, err := cms.Create(ctx, childCM(p.Namespace, p.Name+"-child", p.Name, nil), client.CreateOptions{})
				return ignoreExists(err)
			}
			if fixed {
				if err := makeChild(); err != nil {
					return controller.Result{}, err
				}
			}
			annotate(p, "ready", "true")
			if _, err := cms.Update(ctx, p, client.UpdateOptions{}); err != nil {
				return controller.Result{}, err
			}
			if !fixed {
				return controller.Result{}, makeChild()
			}
			return controller.Result{}, nil
		}
	})
}

// staleScaleDown (stale; Sieve's cassandra-operator and casskop bugs: a restarted operator
// on a lagging apiserver sees an old, smaller size and deletes members the current size
// needs): children p-0 … p-(n-1) for data.replicas = n, the others deleted, by the cached
// size. Fixed: before deleting it reads the parent's size from the server (a quorum read)
// and deletes with the child's uid as a precondition.
func staleScaleDown(fixed bool) func(*controller.Manager) error {
	return onParents("scale", func(_ *controller.Manager, cms *client.Typed[*ConfigMap]) reconcileFunc {
		return func(ctx context.Context, req controller.Request) (controller.Result, error) {
			p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if err != nil {
				return controller.Result{}, ignoreNotFound(err)
			}
			n, _ := strconv.Atoi(p.Data["replicas"])
			kids, err := cms.List(ctx, client.ListOptions{Namespace: p.Namespace, LabelSelector: labels.SelectorFromSet(map[string]string{"parent": p.Name})})
			if err != nil {
				return controller.Result{}, err
			}
			have := map[int]*ConfigMap{}
			extra := false
			for _, k := range kids {
				i, _ := strconv.Atoi(strings.TrimPrefix(k.Name, p.Name+"-"))
				have[i] = k
				extra = extra || i >= n
			}
			if extra && fixed {
				res, err := cms.Resource()
				if err != nil {
					return controller.Result{}, err
				}
				live, err := res.Namespace(p.Namespace).Get(ctx, p.Name, apiclient.GetOptions{})
				if err != nil {
					return controller.Result{}, ignoreNotFound(err)
				}
				n, _ = strconv.Atoi(live.Data["replicas"])
			}
			for i := range slices.Max(append(slices.Collect(maps.Keys(have)), 0)) + 1 {
				k := have[i]
				if i < n || k == nil {
					continue
				}
				var opts client.DeleteOptions
				if fixed {
					uid := k.UID
					opts.Preconditions = &client.Preconditions{UID: &uid}
				}
				if err := cms.Delete(ctx, k, opts); err != nil && !meta.IsNotFound(err) && !(fixed && meta.IsConflict(err)) {
					return controller.Result{}, err
				}
			}
			for i := range n {
				if have[i] == nil {
					if _, err := cms.Create(ctx, childCM(p.Namespace, p.Name+"-"+strconv.Itoa(i), p.Name, nil), client.CreateOptions{}); ignoreExists(err) != nil {
						return controller.Result{}, err
					}
				}
			}
			return controller.Result{}, nil
		}
	})
}

// ownWriteUnseen (stale; the ReplicaSet "expectations" bug class, Sieve's "a cache that has
// not seen the controller's own create"): it creates a Secret for its parent, with a
// generated name, if its cache of Secrets shows none; a reconcile before that cache has
// seen the create makes a second one. Fixed: the Secret's name is the parent's (a second
// create is AlreadyExists).
func ownWriteUnseen(fixed bool) func(*controller.Manager) error {
	return func(mgr *controller.Manager) error {
		cms := client.TypedFor[*ConfigMap](mgr.Client())
		secrets := client.TypedFor[*Secret](mgr.Client())
		owned := controller.Owned[*Secret]()
		return controller.NewBuilder(mgr, "secrets").For(controller.Primary[*ConfigMap](isParent)).Owns(owned).
			Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
				p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
				if err != nil {
					return controller.Result{}, ignoreNotFound(err)
				}
				kids, err := owned.ChildrenOf(p)
				if err != nil || len(kids) > 0 {
					return controller.Result{}, err
				}
				s := &Secret{ObjectMeta: meta.ObjectMeta{Namespace: p.Namespace}}
				if fixed {
					s.Name = p.Name
				} else {
					s.GenerateName = p.Name + "-"
				}
				if err := controllerutil.SetControllerReference(p, s); err != nil {
					return controller.Result{}, err
				}
				_, err = secrets.Create(ctx, s, client.CreateOptions{})
				return controller.Result{}, ignoreExists(err)
			}))
	}
}

// staleOrphanDelete (stale; Sieve's "deleting by name an object its stale view takes for
// an orphan", which is the one just re-created): the Secret named after a parent is deleted
// when the cache holds no such parent. Fixed: deleted with the cached Secret's uid as a
// precondition, so a newer Secret of the same name is never touched.
func staleOrphanDelete(fixed bool) func(*controller.Manager) error {
	return func(mgr *controller.Manager) error {
		cms := client.TypedFor[*ConfigMap](mgr.Client())
		secrets := client.TypedFor[*Secret](mgr.Client())
		byName := controller.EnqueueRequestsFromMapFunc(func(_ context.Context, s *Secret) []controller.Request {
			return []controller.Request{{Namespace: s.Namespace, Name: s.Name}}
		})
		return controller.NewBuilder(mgr, "orphans").For(controller.Primary[*ConfigMap](isParent)).
			Watches(controller.Watched[*Secret](byName)).
			Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
				_, perr := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
				s, serr := secrets.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
				switch {
				case perr != nil && !meta.IsNotFound(perr), serr != nil && !meta.IsNotFound(serr):
					return controller.Result{}, errors.Join(perr, serr)
				case meta.IsNotFound(perr) && serr == nil:
					var opts client.DeleteOptions
					if fixed {
						uid := s.UID
						opts.Preconditions = &client.Preconditions{UID: &uid}
					}
					err := secrets.Delete(ctx, s, opts)
					if fixed && meta.IsConflict(err) {
						err = nil // a newer Secret of that name: not an orphan
					}
					return controller.Result{}, ignoreNotFound(err)
				case perr == nil && meta.IsNotFound(serr):
					_, err := secrets.Create(ctx, &Secret{ObjectMeta: meta.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}, client.CreateOptions{})
					return controller.Result{}, ignoreExists(err)
				}
				return controller.Result{}, nil
			}))
	}
}

// missedFailure (unobserved; Sieve's "a transient failed state never observed"): it
// counts the parent's failures by watching data.phase become Failed. Coalesced events
// (Failed then Running again) hide the failure. Fixed: it copies data.restarts, the
// counter the workload keeps as the kubelet keeps restartCount, and looks at no edge.
func missedFailure(fixed bool) func(*controller.Manager) error {
	return func(mgr *controller.Manager) error {
		var mu sync.Mutex
		last := map[string]string{}
		parents := controller.Primary[*ConfigMap](isParent)
		cms := client.TypedFor[*ConfigMap](mgr.Client())
		return controller.NewBuilder(mgr, "failures").For(parents).
			Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
				p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
				if err != nil {
					return controller.Result{}, ignoreNotFound(err)
				}
				count := p.Annotations["failures"]
				if fixed {
					count = p.Data["restarts"]
				} else {
					mu.Lock()
					before := last[req.Name]
					last[req.Name] = p.Data["phase"]
					mu.Unlock()
					if before != "" && before != "Failed" && p.Data["phase"] == "Failed" {
						n, _ := strconv.Atoi(count)
						count = strconv.Itoa(n + 1)
					}
				}
				if count == "" || count == p.Annotations["failures"] {
					return controller.Result{}, nil
				}
				annotate(p, "failures", count)
				_, err = cms.Update(ctx, p, client.UpdateOptions{})
				return controller.Result{}, err
			}))
	}
}

// initOnce (unobserved; Acto's "delete and re-create under the same name"): the child is
// made once, from the parent's data.seed, and deleted when the parent is gone. A deletion
// and re-creation seen as one change leaves the old parent's child in place. Fixed: the
// child records its parent's uid and is replaced when that differs.
func initOnce(fixed bool) func(*controller.Manager) error {
	return onParents("init", func(_ *controller.Manager, cms *client.Typed[*ConfigMap]) reconcileFunc {
		return func(ctx context.Context, req controller.Request) (controller.Result, error) {
			name := req.Name + "-child"
			c, cerr := cms.Get(ctx, req.Namespace, name, client.GetOptions{})
			if ignoreNotFound(cerr) != nil {
				return controller.Result{}, cerr
			}
			deleteChild := func() error {
				var opts client.DeleteOptions
				if fixed {
					uid := c.UID
					opts.Preconditions = &client.Preconditions{UID: &uid}
				}
				err := cms.Delete(ctx, c, opts)
				if fixed && meta.IsConflict(err) {
					return err // a newer child: look again once the cache has it
				}
				return ignoreNotFound(err)
			}
			p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if meta.IsNotFound(err) {
				if cerr == nil {
					return controller.Result{}, deleteChild()
				}
				return controller.Result{}, nil
			}
			if err != nil {
				return controller.Result{}, err
			}
			if cerr == nil && fixed && c.Annotations["parent-uid"] != p.UID {
				if err := deleteChild(); err != nil {
					return controller.Result{}, err
				}
			} else if cerr == nil {
				return controller.Result{}, nil
			}
			if fixed {
				// A stale cache may show a parent deleted since: make the child of the
				// server's parent only.
				res, err := cms.Resource()
				if err != nil {
					return controller.Result{}, err
				}
				live, err := res.Namespace(p.Namespace).Get(ctx, p.Name, apiclient.GetOptions{})
				if err != nil || live.UID != p.UID {
					return controller.Result{Requeue: true}, ignoreNotFound(err)
				}
			}
			child := childCM(p.Namespace, name, p.Name, map[string]string{"seed": p.Data["seed"]})
			annotate(child, "parent-uid", p.UID)
			_, err = cms.Create(ctx, child, client.CreateOptions{})
			return controller.Result{}, err
		}
	})
}

// missedBlip (unobserved; Sieve's "a short NotReady never seen", Acto's "transient state
// skipped"): an update handler compares the old and new parent and counts a disruption
// when data.ready goes from true to false; coalesced updates skip the false. Fixed: the
// workload bumps data.transitions at each change of data.ready (as a Node condition's
// lastTransitionTime moves) and the count is read from it.
func missedBlip(fixed bool) func(*controller.Manager) error {
	return func(mgr *controller.Manager) error {
		var mu sync.Mutex
		blips := map[string]int{}
		cms := client.TypedFor[*ConfigMap](mgr.Client())
		edges := controller.EventHandlerFuncs[*ConfigMap]{
			CreateFunc: func(_ context.Context, e controller.CreateEvent[*ConfigMap], q controller.Queue) {
				q.Add(controller.RequestFor(e.Object))
			},
			UpdateFunc: func(_ context.Context, e controller.UpdateEvent[*ConfigMap], q controller.Queue) {
				if e.ObjectOld.Data["ready"] == "true" && e.ObjectNew.Data["ready"] == "false" {
					mu.Lock()
					blips[e.ObjectNew.Name]++
					mu.Unlock()
				}
				q.Add(controller.RequestFor(e.ObjectNew))
			},
		}
		return controller.NewBuilder(mgr, "blips").Watches(controller.Watched[*ConfigMap](edges, isParent)).
			Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
				p, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
				if err != nil {
					return controller.Result{}, ignoreNotFound(err)
				}
				var count int
				if fixed {
					t, _ := strconv.Atoi(p.Data["transitions"])
					count = t / 2 // each disruption is a change to false and one back
					if p.Data["ready"] == "false" {
						count = (t + 1) / 2
					}
				} else {
					n, _ := strconv.Atoi(p.Annotations["disruptions"])
					mu.Lock()
					count = n + blips[req.Name]
					blips[req.Name] = 0
					mu.Unlock()
				}
				if strconv.Itoa(count) == p.Annotations["disruptions"] || count == 0 && p.Annotations["disruptions"] == "" {
					return controller.Result{}, nil
				}
				annotate(p, "disruptions", strconv.Itoa(count))
				_, err = cms.Update(ctx, p, client.UpdateOptions{})
				return controller.Result{}, err
			}))
	}
}
