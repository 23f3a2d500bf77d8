package apitest

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/meta"
)

// Clients of one server told apart: a client is named by the User-Agent of its requests
// (ConfigFor sets it), as the kube-apiserver's audit log and the tests of leader election
// tell replicas apart. Per client, a test can kill it as a killed process dies (Kill), act
// at each of its writes (OnWrite), and hold back or age what its lists and watches show
// (Hold, HoldAt: holds.go).

// FaultKind values of the client faults.
const (
	// FaultKilledClient: a client was killed (Clients.Kill, or a WriteAction that kills).
	FaultKilledClient FaultKind = "KilledClient"
	// FaultWriteAction: a write hook answered a write other than WriteProceed.
	FaultWriteAction FaultKind = "WriteAction"
	// FaultHold / FaultHoldRelease: a client's view of a resource was held, or moved on.
	FaultHold        FaultKind = "Hold"
	FaultHoldRelease FaultKind = "HoldRelease"
)

// clientName is the name of the client of a request: its User-Agent.
func clientName(r *http.Request) string { return r.UserAgent() }

// clientState is what the server knows of named clients (its own lock; holds are under
// s.mu, holds.go).
type clientState struct {
	mu    sync.Mutex
	dead  map[string]bool
	hooks map[string]WriteHook
	// hookMu makes hooks run one at a time, in the order writes arrive.
	hookMu sync.Mutex
}

// Clients acts on the server's clients one by one; get it with Server.Clients. It is safe
// for concurrent use.
type Clients struct{ s *Server }

// Clients returns the per-client controls of the server: srv.Clients().Kill("replica-a").
func (s *Server) Clients() *Clients { return &Clients{s: s} }

// ConfigFor returns Config for a client named name: its requests carry name as their
// User-Agent, which is how the server tells clients apart (Clients).
func (s *Server) ConfigFor(name string) *apiclient.Config {
	c := s.Config()
	c.UserAgent = name
	return c
}

// Kill makes client a dead process: every later request it sends is dropped without an
// answer (the connection reset, as ResetRequests), and its open watches are aborted. A
// request the server is handling when Kill is called finishes; use a WriteHook that kills
// to die at a write. It returns the number of watches aborted. A killed client stays dead:
// a restarted process is a new client (another name).
func (c *Clients) Kill(client string) int {
	c.s.markDead(client, "killed")
	return c.s.abortClientWatches(client)
}

// Killed reports whether client was killed.
func (c *Clients) Killed(client string) bool {
	cs := &c.s.clients
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.dead[client]
}

func (s *Server) markDead(client, why string) {
	cs := &s.clients
	cs.mu.Lock()
	if cs.dead == nil {
		cs.dead = map[string]bool{}
	}
	was := cs.dead[client]
	cs.dead[client] = true
	cs.mu.Unlock()
	if !was {
		s.recordFault(FaultRecord{Kind: FaultKilledClient, Detail: client + ": " + why})
	}
}

func (s *Server) abortClientWatches(client string) int {
	n := 0
	s.forClientWatchers(client, "", func(w *watcher) {
		w.push(watchCtl{kind: ctlAbort})
		n++
	})
	return n
}

// forClientWatchers runs fn on every open watcher of client on resource ("" for all; the
// resource's canonical name).
func (s *Server) forClientWatchers(client, resource string, fn func(*watcher)) {
	s.mu.Lock()
	var ws []*watcher
	for _, w := range s.watchers {
		if w.client == client && (resource == "" || w.res.typ.name() == resource) {
			ws = append(ws, w)
		}
	}
	s.mu.Unlock()
	for _, w := range ws {
		fn(w)
	}
}

// refuseDead drops a request of a killed client; it reports whether it did.
func (s *Server) refuseDead(w http.ResponseWriter, r *http.Request) bool {
	cs := &s.clients
	cs.mu.Lock()
	dead := cs.dead[clientName(r)]
	cs.mu.Unlock()
	if !dead {
		return false
	}
	s.setRequestCodeFromWriter(w, CodeDropped)
	resetConnection(w, r)
	return true
}

// Write is a write request as a WriteHook sees it, when it arrives.
type Write struct {
	Client string
	// Seq is the request's Request.Seq in the request log.
	Seq  int64
	Verb Verb
	// Resource is the resource's name in apitest form ("widgets.example.com").
	Resource, Subresource, Namespace, Name string
	// ServerRV is the server's resourceVersion when the write arrived: the state the
	// write is made against.
	ServerRV string
}

// String is the write as a log line shows it: "update widgets.example.com/status default/w".
func (w Write) String() string {
	res := w.Resource
	if w.Subresource != "" {
		res += "/" + w.Subresource
	}
	name := w.Name
	if w.Namespace != "" {
		name = w.Namespace + "/" + name
	}
	return fmt.Sprintf("%s %s %s", w.Verb, res, name)
}

// WriteAction is what the server does with a write a WriteHook saw.
type WriteAction int

// The actions of a WriteHook.
const (
	// WriteProceed handles the write as usual.
	WriteProceed WriteAction = iota
	// WriteConflict answers 409 Conflict ("the object has been modified") without
	// committing the write, as when another writer got there first.
	WriteConflict
	// WriteInternalError answers 500 without committing the write.
	WriteInternalError
	// WriteTimeout answers 504 Timeout without committing the write.
	WriteTimeout
	// WriteLostAnswer commits the write, then drops the connection without an answer: the
	// client cannot tell whether its write happened (a timeout after commit).
	WriteLostAnswer
	// WriteKillBefore kills the client (Kill) instead of committing the write.
	WriteKillBefore
	// WriteKillAfter commits the write and kills the client before it is answered: the
	// process died right after its write reached storage.
	WriteKillAfter
)

var writeActionNames = [...]string{"proceed", "conflict", "internal-error", "timeout", "lost-answer", "kill-before", "kill-after"}

// String names the action ("kill-after").
func (a WriteAction) String() string {
	if a >= 0 && int(a) < len(writeActionNames) {
		return writeActionNames[a]
	}
	return "WriteAction(" + strconv.Itoa(int(a)) + ")"
}

// A WriteHook is called at every write (create, update, patch, delete, deletecollection,
// and posts to subresources such as pods/eviction) of one client, before the server
// handles it, one call at a time in the order the writes arrive, and says what to do with
// it. It must not block; it may call the server's Go API.
type WriteHook func(Write) WriteAction

// OnWrite sets the hook of client's writes (nil removes it). The k-th write of a process,
// counted from now:
//
//	n := 0
//	srv.Clients().OnWrite("replica-a", func(w apitest.Write) apitest.WriteAction {
//		if n++; n == k {
//			return apitest.WriteKillAfter
//		}
//		return apitest.WriteProceed
//	})
func (c *Clients) OnWrite(client string, hook WriteHook) {
	cs := &c.s.clients
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if hook == nil {
		delete(cs.hooks, client)
		return
	}
	if cs.hooks == nil {
		cs.hooks = map[string]WriteHook{}
	}
	cs.hooks[client] = hook
}

func isWrite(v Verb) bool {
	switch v {
	case VerbCreate, VerbUpdate, VerbPatch, VerbDelete, VerbDeleteCollection:
		return true
	}
	return false
}

// interceptWrite runs the client's write hook on a write request. It returns the writer
// to answer with and, when the hook took the request over, done (answered) or finish (to
// call once the request is handled: it drops the answer).
func (s *Server) interceptWrite(w http.ResponseWriter, r *http.Request, ri *reqInfo) (out http.ResponseWriter, finish func(), done bool) {
	if !isWrite(ri.verb) {
		return w, nil, false
	}
	cs := &s.clients
	client := clientName(r)
	cs.mu.Lock()
	hook := cs.hooks[client]
	cs.mu.Unlock()
	if hook == nil {
		return w, nil, false
	}
	cs.hookMu.Lock()
	s.mu.Lock()
	rv := s.rv
	s.mu.Unlock()
	wr := Write{Client: client, Seq: ri.rec.Seq, Verb: ri.verb, Resource: ri.res.typ.name(), Subresource: ri.sub,
		Namespace: ri.namespace, Name: ri.name, ServerRV: strconv.FormatUint(rv, 10)}
	act := hook(wr)
	if act == WriteKillBefore || act == WriteKillAfter {
		// Dead from now: the writes that arrive after this one are refused.
		s.markDead(client, act.String()+" at "+wr.String())
	}
	cs.hookMu.Unlock()
	if act != WriteProceed {
		s.recordFault(FaultRecord{Kind: FaultWriteAction, Resource: wr.Resource, Verb: wr.Verb, Detail: client + ": " + act.String() + " " + wr.String()})
	}
	t := &ri.res.typ
	switch act {
	case WriteConflict:
		writeStatus(w, errConflict(t, ri.name, conflictModified))
		return w, nil, true
	case WriteInternalError:
		writeStatus(w, errInjected(http.StatusInternalServerError, 0))
		return w, nil, true
	case WriteTimeout:
		writeStatus(w, apierr.New(http.StatusGatewayTimeout, meta.StatusReasonTimeout, "Timeout: request did not complete within requested timeout - context deadline exceeded"))
		return w, nil, true
	case WriteKillBefore:
		s.setRequestCodeFromWriter(w, CodeDropped)
		s.abortClientWatches(client)
		resetConnection(w, r)
		return w, nil, true
	case WriteLostAnswer, WriteKillAfter:
		sw := &swallowWriter{h: http.Header{}}
		return sw, func() {
			s.setRequestCodeFromWriter(w, CodeDropped)
			if act == WriteKillAfter {
				s.abortClientWatches(client)
			}
			resetConnection(w, r)
		}, false
	}
	return w, nil, false
}

// swallowWriter takes an answer that is never sent.
type swallowWriter struct{ h http.Header }

func (s *swallowWriter) Header() http.Header         { return s.h }
func (s *swallowWriter) Write(b []byte) (int, error) { return len(b), nil }
func (s *swallowWriter) WriteHeader(int)             {}

// CutWatches ends client's open watches of resource ("" for all) cleanly, as
// Faults().CutWatches does for every client: the client watches again from where it was.
// It returns the number of watches cut.
func (c *Clients) CutWatches(client, resource string) (int, error) {
	s := c.s
	name, err := s.ResourceName(resource)
	if err != nil {
		return 0, err
	}
	n := 0
	s.forClientWatchers(client, name, func(w *watcher) {
		w.push(watchCtl{kind: ctlCut})
		n++
	})
	return n, nil
}

// ResourceName returns the name the server's logs, holds and journal give the resource
// ref names ("widgets", "wd", "Widget", "widgets.example.com" → "widgets.example.com";
// "" stays ""), or an error if it serves none.
func (s *Server) ResourceName(ref string) (string, error) {
	if ref == "" {
		return "", nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookupLocked(ref)
	if err != nil {
		return "", err
	}
	return r.typ.name(), nil
}
