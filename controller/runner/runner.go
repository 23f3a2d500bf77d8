package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// DefaultStartInterval is the default of Options.StartInterval.
const DefaultStartInterval = 20 * time.Millisecond

// ErrUnknownController is wrapped by the error about a name in an enable list (or a
// --controllers flag) that names no controller.
var ErrUnknownController = errors.New("not in the list of known controllers")

// ErrNotServed is matched (errors.Is) by every *NotServedError.
var ErrNotServed = errors.New("resource is not served")

// NotServedError says that a controller needs a resource the API server does not serve (a
// CustomResourceDefinition not installed, an API group turned off).
type NotServedError struct {
	// Controller is the controller's name.
	Controller string
	// Resource is the missing resource.
	Resource meta.GroupVersionResource
}

// Error reads "resource <group/version/resource> is not served" (core resources
// "v1/<resource>").
func (e *NotServedError) Error() string {
	return "resource " + gvrPath(e.Resource) + " is not served"
}

// Is makes errors.Is(err, ErrNotServed) true.
func (e *NotServedError) Is(target error) bool { return target == ErrNotServed }

func gvrPath(r meta.GroupVersionResource) string {
	if r.Group == "" {
		return r.Version + "/" + r.Resource
	}
	return r.Group + "/" + r.Version + "/" + r.Resource
}

// InitFunc sets a controller up: it builds its informers, queue and reconciler from cc and
// adds what must run to cc.Manager (a controller from the builder, a Runnable). It returns
// started=false with a nil error to be skipped (a feature turned off, a resource it can do
// without), and an error to stop the whole runner, as kube-controller-manager's controller
// initializers. ctx is the runner's: it ends when Run's context does.
type InitFunc func(ctx context.Context, cc ControllerContext) (started bool, err error)

// Descriptor names a controller and says how to start it (kube-controller-manager's
// ControllerDescriptor).
type Descriptor struct {
	// Name is the controller's name in the enable list, the logs and /readyz.
	Name string
	// Init sets the controller up; required.
	Init InitFunc
	// Resources are the resources the controller cannot work without. If discovery does not
	// list one of them, the controller is skipped: Init is not called, the skip is logged and
	// the controller's /readyz entry fails with a *NotServedError (unless Optional).
	Resources []meta.GroupVersionResource
	// DisabledByDefault leaves the controller out of "*": it runs only when the enable list
	// names it.
	DisabledByDefault bool
	// Optional makes a skip for a missing resource quiet: logged, but /readyz passes (a
	// controller for an API that not every cluster serves).
	Optional bool
	// Follow makes the controller follow its Resources instead of being skipped when one is
	// not served: Init is called whether or not they are, and builds its controllers with
	// controller.Options.FollowResources (ControllerContext.Follow says so); the Manager
	// starts them once their resources are served, stops them when one goes, and starts them
	// again when it is back. The controller's /readyz entry fails, naming them, while one of
	// Resources is not served (it passes with Optional).
	Follow bool
	// Permissions are the API permissions the controller needs beyond those its Init's
	// controllers and informers declare (see controller.Manager.Permissions), for a
	// Runnable it adds by hand. They are added to the Manager when Init starts it.
	Permissions []rbac.Rule
}

// ControllerContext is what an InitFunc gets (kube-controller-manager's ControllerContext):
// the shared machinery of every controller of the runner.
type ControllerContext struct {
	// Name is the controller's name (Descriptor.Name).
	Name string
	// Manager runs the controller; add its controllers and runnables to it. Its informers
	// start after every InitFunc has returned.
	Manager *controller.Manager
	// Factory is the manager's shared informer factory.
	Factory *informer.Factory
	// Client is the manager's controller client (cache reads, API writes).
	Client *client.Client
	// APIClient is the manager's API client.
	APIClient *apiclient.Client
	// EventRecorder records events with the controller's name as their source.
	EventRecorder events.EventRecorder
	// Logger is the runner's logger with the controller's name.
	Logger *slog.Logger
	// AvailableResources are the resources discovery listed when the runner started.
	AvailableResources map[meta.GroupVersionResource]apiclient.APIResource
	// Follow is Descriptor.Follow: build the controllers with
	// controller.Options.FollowResources.
	Follow bool
}

// IsServed reports whether discovery listed gvr.
func (cc ControllerContext) IsServed(gvr meta.GroupVersionResource) bool {
	_, ok := cc.AvailableResources[gvr]
	return ok
}

// Options configure a Runner.
type Options struct {
	// Controllers is the enable list in kube-controller-manager's --controllers syntax: "*"
	// enables every controller that is not DisabledByDefault, "name" enables one, "-name"
	// disables one; a name beats "*" whatever the order. Default ["*"]. See ControllersVar
	// for the flag.
	Controllers []string
	// StartInterval spaces the controllers' starts: after each InitFunc the runner waits
	// StartInterval plus a random jitter of up to StartInterval (kube-controller-manager's
	// ControllerStartInterval with a jitter factor of 1), so that controllers do not hit the
	// API server all at once. Default DefaultStartInterval; negative: no wait.
	StartInterval time.Duration
	// Logger receives the per-controller lines (default the manager's logger).
	Logger *slog.Logger
}

// Status is what the runner did with a controller.
type Status string

// Controller statuses, as listed by Runner.Statuses.
const (
	StatusPending  Status = "pending"  // Run has not come to it yet
	StatusDisabled Status = "disabled" // not in the enable list
	StatusSkipped  Status = "skipped"  // a resource not served, or Init returned false
	StatusStarted  Status = "started"  // Init returned true
	StatusFailed   Status = "failed"   // Init returned an error
)

// Runner starts named controllers on one Manager, as kube-controller-manager does: the
// enabled ones, one after the other with a jittered pause, skipping those whose resources
// are not served; then it starts the manager (shared informers, caches, leader election,
// the controllers). See the package doc and docs/runner.md.
type Runner struct {
	mgr   *controller.Manager
	descs []Descriptor
	opts  Options
	log   *slog.Logger

	mu     sync.Mutex
	ran    bool
	dryRun bool // Permissions: set up without a server
	state  map[string]*ctrlState
}

type ctrlState struct {
	status    Status
	err       error                  // skip reason or failure
	informers []informer.AnyInformer // made by its Init
}

// New returns a Runner of the controllers descs on mgr. It fails, wrapping
// ErrUnknownController, if the enable list names an unknown controller, and on duplicate
// names. A descriptor without a name or an Init is a programming error: New panics.
func New(mgr *controller.Manager, descs []Descriptor, opts Options) (*Runner, error) {
	if mgr == nil {
		panic("runner: New needs a Manager")
	}
	seen := map[string]bool{}
	for _, d := range descs {
		if d.Name == "" || d.Init == nil {
			panic(fmt.Sprintf("runner: descriptor %q needs a name and an Init", d.Name))
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("runner: controller %q is listed twice", d.Name)
		}
		seen[d.Name] = true
	}
	if opts.Controllers == nil {
		opts.Controllers = []string{"*"}
	}
	if err := ValidateControllers(opts.Controllers, descs); err != nil {
		return nil, err
	}
	if opts.StartInterval == 0 {
		opts.StartInterval = DefaultStartInterval
	}
	if opts.Logger == nil {
		opts.Logger = mgr.Logger()
	}
	descs = slices.Clone(descs)
	slices.SortFunc(descs, func(a, b Descriptor) int { return strings.Compare(a.Name, b.Name) })
	r := &Runner{mgr: mgr, descs: descs, opts: opts, log: opts.Logger, state: map[string]*ctrlState{}}
	for _, d := range descs {
		r.state[d.Name] = &ctrlState{status: StatusPending}
		if IsEnabled(d, opts.Controllers) {
			name := d.Name
			if err := mgr.AddReadyzCheck("controller-"+name, func(*http.Request) error { return r.ready(name) }); err != nil {
				return nil, fmt.Errorf("runner: %w", err)
			}
		}
	}
	return r, nil
}

// ValidateControllers checks an enable list against the known controllers: every element
// is "*", a name or "-name" of a descriptor. The error wraps ErrUnknownController.
func ValidateControllers(list []string, descs []Descriptor) error {
	for _, item := range list {
		if item == "*" {
			continue
		}
		name := strings.TrimPrefix(item, "-")
		if !slices.ContainsFunc(descs, func(d Descriptor) bool { return d.Name == name }) {
			return fmt.Errorf("runner: %q is %w (known: %s)", name, ErrUnknownController, strings.Join(names(descs), ", "))
		}
	}
	return nil
}

func names(descs []Descriptor) []string {
	out := make([]string, 0, len(descs))
	for _, d := range descs {
		out = append(out, d.Name)
	}
	slices.Sort(out)
	return out
}

// IsEnabled reports whether the enable list turns d on: "-name" off, "name" on, otherwise
// "*" turns on the controllers that are not DisabledByDefault.
func IsEnabled(d Descriptor, list []string) bool {
	hasStar := false
	for _, item := range list {
		switch item {
		case "-" + d.Name:
			return false
		case d.Name:
			return true
		case "*":
			hasStar = true
		}
	}
	return hasStar && !d.DisabledByDefault
}

// Run reads discovery, sets up every enabled controller in name order (logging
// "Starting controller", then "Started controller", "Skipping controller" or, for those
// not enabled, "Controller is disabled"), pausing StartInterval plus jitter after each
// one, and then runs the manager until ctx is done (Manager.Start: the shared informers
// start only now, after every InitFunc). It returns at once, without starting the manager,
// when an InitFunc fails or when a controller's InitFunc made an informer of a resource
// discovery does not list (a *NotServedError naming the controller, instead of a cache
// sync that could only time out). It returns nil when ctx ends, during the setup too. A
// Runner runs once.
func (r *Runner) Run(ctx context.Context) error {
	r.mu.Lock()
	if r.ran {
		r.mu.Unlock()
		return errors.New("runner: Runner already ran")
	}
	r.ran = true
	r.mu.Unlock()

	res, err := r.mgr.APIClient().ServerResources(ctx)
	if res == nil && err != nil {
		return fmt.Errorf("runner: discovery: %w", err)
	}
	if err != nil {
		// Unavailable aggregated APIs: their resources count as not served.
		r.log.Warn("discovery is incomplete", "err", err)
	}
	available := make(map[meta.GroupVersionResource]apiclient.APIResource, len(res))
	for _, ar := range res {
		available[ar.GroupVersionResource] = ar
	}
	if err := r.initAll(ctx, available); err != nil {
		if ctx.Err() != nil {
			return nil // shut down while starting, as Manager.Start after ctx is done
		}
		return err
	}
	return r.mgr.Start(ctx)
}

func (r *Runner) initAll(ctx context.Context, available map[meta.GroupVersionResource]apiclient.APIResource) error {
	for _, d := range r.descs {
		if err := ctx.Err(); err != nil {
			return err
		}
		log := r.log.With("controller", d.Name)
		if !IsEnabled(d, r.opts.Controllers) {
			log.Info("Controller is disabled")
			r.setState(d.Name, StatusDisabled, nil, nil)
			continue
		}
		if d.Follow {
			r.mgr.NotServed(d.Resources...) // the Manager tracks them from Start on
		} else if gvr, ok := missing(d.Resources, available); !ok {
			err := &NotServedError{Controller: d.Name, Resource: gvr}
			log.Warn("Skipping controller", "reason", err.Error())
			r.setState(d.Name, StatusSkipped, err, nil)
			continue
		}
		log.Info("Starting controller")
		before := r.mgr.Factory().Informers()
		cc := ControllerContext{
			Name: d.Name, Manager: r.mgr, Factory: r.mgr.Factory(), Client: r.mgr.Client(),
			APIClient: r.mgr.APIClient(), EventRecorder: r.mgr.EventRecorderFor(d.Name),
			Logger: log, AvailableResources: available, Follow: d.Follow,
		}
		started, err := d.Init(ctx, cc)
		made := newInformers(before, r.mgr.Factory().Informers())
		if err != nil {
			log.Error("Error starting controller", "err", err)
			r.setState(d.Name, StatusFailed, err, made)
			return fmt.Errorf("runner: starting controller %q: %w", d.Name, err)
		}
		for _, inf := range made {
			if r.dryRun {
				break // nothing was asked of discovery
			}
			if gvr, ok := r.mgr.Factory().ResourceOf(inf); ok {
				if _, served := available[gvr]; !served {
					nerr := &NotServedError{Controller: d.Name, Resource: gvr}
					log.Error("Error starting controller", "err", nerr)
					r.setState(d.Name, StatusFailed, nerr, made)
					return fmt.Errorf("runner: controller %q: %w", d.Name, nerr)
				}
			}
		}
		if !started {
			log.Warn("Skipping controller", "reason", "its initializer did not start it")
			r.setState(d.Name, StatusSkipped, nil, made)
			continue
		}
		r.setState(d.Name, StatusStarted, nil, made)
		r.mgr.AddPermissions(d.Permissions...)
		log.Info("Started controller")
		if r.dryRun {
			continue
		}
		if err := r.pause(ctx); err != nil {
			return err
		}
	}
	return nil
}

// pause waits StartInterval plus up to StartInterval of jitter.
func (r *Runner) pause(ctx context.Context) error {
	if r.opts.StartInterval < 0 {
		return nil
	}
	d := r.opts.StartInterval + time.Duration(rand.Int64N(int64(r.opts.StartInterval)+1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func missing(need []meta.GroupVersionResource, available map[meta.GroupVersionResource]apiclient.APIResource) (meta.GroupVersionResource, bool) {
	for _, gvr := range need {
		if _, ok := available[gvr]; !ok {
			return gvr, false
		}
	}
	return meta.GroupVersionResource{}, true
}

func newInformers(before, after []informer.AnyInformer) []informer.AnyInformer {
	var out []informer.AnyInformer
	for _, inf := range after {
		if !slices.Contains(before, inf) {
			out = append(out, inf)
		}
	}
	return out
}

func (r *Runner) setState(name string, s Status, err error, infs []informer.AnyInformer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state[name]
	st.status, st.err, st.informers = s, err, infs
}

// ready is a controller's /readyz entry: pending until Run came to it; a started
// controller is ready once the informers its Init made have synced; a controller skipped
// for a missing resource fails with the NotServedError (unless Optional).
func (r *Runner) ready(name string) error {
	r.mu.Lock()
	st := *r.state[name]
	r.mu.Unlock()
	switch st.status {
	case StatusPending:
		return errors.New("not started yet")
	case StatusFailed:
		return st.err
	case StatusSkipped:
		if st.err != nil && !r.optional(name) {
			return st.err
		}
		return nil
	}
	if d := r.descriptor(name); d.Follow {
		if miss := r.mgr.NotServed(d.Resources...); len(miss) > 0 && !d.Optional {
			return &controller.NotServedError{Controller: name, Resources: miss}
		}
	}
	var waiting []string
	for _, inf := range st.informers {
		if !inf.HasSynced() {
			waiting = append(waiting, inf.Name())
		}
	}
	if len(waiting) > 0 {
		return fmt.Errorf("caches not synced yet: %s", strings.Join(waiting, ", "))
	}
	return nil
}

func (r *Runner) optional(name string) bool { return r.descriptor(name).Optional }

func (r *Runner) descriptor(name string) Descriptor {
	for _, d := range r.descs {
		if d.Name == name {
			return d
		}
	}
	return Descriptor{}
}

// ControllerStatus is a controller's Status with its reason.
type ControllerStatus struct {
	Name   string
	Status Status
	// Err is the skip reason (a *NotServedError) or the failure, if any.
	Err error
}

// Statuses returns what the runner did with each controller, in name order.
func (r *Runner) Statuses() []ControllerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ControllerStatus, 0, len(r.descs))
	for _, d := range r.descs {
		st := r.state[d.Name]
		out = append(out, ControllerStatus{Name: d.Name, Status: st.status, Err: st.err})
	}
	return out
}
