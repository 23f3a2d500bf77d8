package apitest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/kubelet"
)

// NodesOptions configure the simulated nodes of StartNodes. Every delay is measured with
// the time package, so that in a testing/synctest bubble (a server with Options.InMemory)
// the fake clock runs them at once.
type NodesOptions struct {
	// Count is the number of Nodes, named node-1, node-2, ... (default 1).
	Count int
	// StartDelay is how long a scheduled Pod's containers take to run: pulling the image
	// and starting it (default 1 s; negative: at once). A container with a readiness probe
	// is ready its initialDelaySeconds later (after its startup probe's), one without at
	// once.
	StartDelay time.Duration
	// RestartDelay is the CrashLoopBackOff before a crashed container runs again (default
	// 10 s, the kubelet's first back-off).
	RestartDelay time.Duration
	// PullRetryDelay is the ImagePullBackOff between pulls of an image that failed (default
	// 10 s).
	PullRetryDelay time.Duration
	// StopDelay is how long the containers of a Pod deleted with a grace period take to
	// stop, at most the grace period (default 1 s; negative: at once).
	StopDelay time.Duration
}

// Nodes are simulated Nodes and their kubelets (see StartNodes).
type Nodes struct {
	s      *Server
	timing kubelet.Timing
	stopIn time.Duration

	mu       sync.Mutex
	nodes    []*simNode
	pods     map[string]*simPod // by uid
	pullFail map[string]int     // image → FailImagePulls in force

	kick    chan struct{}
	stopped chan struct{}
	done    chan struct{}
	once    sync.Once
}

type simNode struct {
	name, ip      string
	ready         bool
	notReadySince time.Time
	seq           int // pod IPs handed out
	index         int
}

type simPod struct {
	model      *kubelet.Pod
	deleteSeen time.Time // when the kubelet saw its deletion
	evicted    bool
}

// StartNodes adds simulated Nodes, with a kubelet each, to the server, until Close (or
// Nodes.Stop). From then on Pods are scheduled to the Ready Node with the fewest Pods (a
// nodeSelector is honoured; a Pod of another schedulerName is left alone), run after
// StartDelay and are Ready after their readiness probe's initial delay. A Pod deleted
// with a grace period stays Terminating until its containers have stopped (StopDelay),
// then the kubelet deletes it; a Pod of a NotReady Node is Ready=False and is evicted
// (deleted) once its toleration of node.kubernetes.io/not-ready runs out. A test fails a
// Pod, crashes a container, fails image pulls or makes a Node NotReady through Nodes.
// Without StartNodes, Pods are never scheduled and deleted at once, as in envtest.
func (s *Server) StartNodes(opts NodesOptions) (*Nodes, error) {
	if opts.Count <= 0 {
		opts.Count = 1
	}
	def := func(d *time.Duration, v time.Duration) {
		switch {
		case *d == 0:
			*d = v
		case *d < 0:
			*d = 0
		}
	}
	def(&opts.StartDelay, time.Second)
	def(&opts.RestartDelay, 10*time.Second)
	def(&opts.PullRetryDelay, 10*time.Second)
	def(&opts.StopDelay, time.Second)
	n := &Nodes{s: s, stopIn: opts.StopDelay, pods: map[string]*simPod{}, pullFail: map[string]int{},
		timing: kubelet.Timing{Start: opts.StartDelay, Restart: opts.RestartDelay, PullRetry: opts.PullRetryDelay},
		kick:   make(chan struct{}, 1), stopped: make(chan struct{}), done: make(chan struct{})}
	s.mu.Lock()
	if s.nodes != nil {
		s.mu.Unlock()
		return nil, errors.New("apitest: StartNodes called twice")
	}
	s.nodes = n
	s.mu.Unlock()
	for i := range opts.Count {
		node := &simNode{name: "node-" + strconv.Itoa(i+1), ip: fmt.Sprintf("10.0.1.%d", i+1), ready: true, index: i + 1}
		if _, err := s.Create("nodes", nodeObject(node)); err != nil {
			return nil, err
		}
		if err := n.writeNodeStatus(node); err != nil {
			return nil, err
		}
		n.nodes = append(n.nodes, node)
	}
	if !s.track.addHandler() {
		return nil, errors.New("apitest: the server is closed")
	}
	go func() {
		defer s.track.doneHandler()
		defer close(n.done)
		n.run()
	}()
	return n, nil
}

// Names returns the names of the Nodes.
func (n *Nodes) Names() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, len(n.nodes))
	for i, node := range n.nodes {
		out[i] = node.name
	}
	return out
}

// Stop stops the kubelets: Pods stay as they are. Close calls it.
func (n *Nodes) Stop() {
	n.once.Do(func() { close(n.stopped) })
	<-n.done
}

// FailPod makes the Pod fail: its containers exit 1, it is Failed and not Ready, and its
// containers do not restart. The Pod must run on one of the Nodes.
func (n *Nodes) FailPod(namespace, name string) error {
	return n.withPod(namespace, name, func(p *simPod, now time.Time) error {
		p.model.Fail(now, "")
		return nil
	})
}

// CrashContainer makes a running container exit 1: the Pod is not Ready, the container
// waits RestartDelay (CrashLoopBackOff) and runs again with its restartCount one higher, and
// is ready again after its readiness delay; with restartPolicy Never the Pod fails.
func (n *Nodes) CrashContainer(namespace, name, container string) error {
	return n.withPod(namespace, name, func(p *simPod, now time.Time) error {
		c := p.model.Container(container)
		if c == nil {
			return fmt.Errorf("apitest: pod %s/%s has no container %q", namespace, name, container)
		}
		return p.model.Crash(c, now, n.timing)
	})
}

// FailImagePulls makes the pulls of image fail, for the containers not started yet (now or
// later): they wait with ErrImagePull, then ImagePullBackOff, and their Pods stay Pending.
// restore lets the next retry (PullRetryDelay) pull it.
func (n *Nodes) FailImagePulls(image string) (restore func()) {
	n.mu.Lock()
	n.pullFail[image]++
	now := time.Now()
	n.forContainers(image, func(c *kubelet.Container) { c.PullFailing(true, now, n.timing) })
	n.mu.Unlock()
	n.wake()
	var once sync.Once
	return func() {
		once.Do(func() {
			n.mu.Lock()
			if n.pullFail[image]--; n.pullFail[image] <= 0 {
				delete(n.pullFail, image)
				now := time.Now()
				n.forContainers(image, func(c *kubelet.Container) { c.PullFailing(false, now, n.timing) })
			}
			n.mu.Unlock()
			n.wake()
		})
	}
}

// SetNodeReady makes a Node Ready or NotReady. A NotReady Node (its kubelet no longer
// reports) gets the node.kubernetes.io/not-ready taints, no new Pods, and its Pods'
// Ready conditions turn False; they are evicted once their toleration of the taint
// (tolerationSeconds, 300 s by default admission) runs out, and stay Terminating until the
// Node is Ready again, as on a cluster.
func (n *Nodes) SetNodeReady(name string, ready bool) error {
	n.mu.Lock()
	i := slices.IndexFunc(n.nodes, func(x *simNode) bool { return x.name == name })
	if i < 0 {
		n.mu.Unlock()
		return fmt.Errorf("apitest: no simulated node %q", name)
	}
	node := n.nodes[i]
	if node.ready != ready {
		node.ready = ready
		node.notReadySince = time.Time{}
		if !ready {
			node.notReadySince = time.Now()
		}
	}
	cp := *node
	n.mu.Unlock()
	if err := n.writeNodeStatus(&cp); err != nil {
		return err
	}
	n.wake()
	return nil
}

func (n *Nodes) withPod(namespace, name string, fn func(p *simPod, now time.Time) error) error {
	o, err := n.s.Get("pods", namespace, name)
	if err != nil {
		return err
	}
	n.mu.Lock()
	p := n.pods[o.UID()]
	var ferr error
	if p == nil {
		ferr = fmt.Errorf("apitest: pod %s/%s does not run on a simulated node (yet)", namespace, name)
	} else {
		ferr = fn(p, time.Now())
	}
	n.mu.Unlock()
	n.wake()
	return ferr
}

func (n *Nodes) forContainers(image string, fn func(*kubelet.Container)) {
	for _, p := range n.pods {
		for _, c := range p.model.Containers {
			if c.Image == image {
				fn(c)
			}
		}
	}
}

func (n *Nodes) wake() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// run is the kubelets' loop: sync, then sleep until the next change of a Pod's status, a
// change on the server, a fault, or Stop.
func (n *Nodes) run() {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		changed := n.s.changedChan()
		next := n.sync(time.Now())
		var wake <-chan time.Time
		if !next.IsZero() {
			d := time.Until(next)
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			wake = timer.C
		}
		select {
		case <-n.stopped:
			return
		case <-n.s.ctx.Done():
			return
		case <-changed:
		case <-n.kick:
		case <-wake:
		}
		// Go 1.23 timers: Reset drops a value not received, so the next turn starts clean.
	}
}
