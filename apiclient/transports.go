package apiclient

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"unsafe"
)

// Transports shares HTTP transports, and with them their connection pools and HTTP/2
// connections, among the Clients made by its New that reach one server the same way: the
// same scheme, host and port, the same TLS settings (CA, client certificate and key,
// server name, verification), proxy, Dial func value (a copy of one value: a closure made
// again is another) and dial and handshake deadlines, and the same exec plugin
// configuration. Bearer tokens, basic credentials, rate limits and the other settings are
// each Client's own (they are applied per request), so Clients of many clusters served by
// one API server (virtual clusters, workspaces of one control plane, tenants with tokens
// of their own) share one pool, and their watches the streams of one HTTP/2 connection.
// A transport shared by Clients whose exec plugin gives a client certificate presents the
// certificate of the first Client's plugin runs (the plugin configurations are equal). A
// transport's dial logs go to the first Client's Logger.
//
// Its zero value is not usable: use NewTransports. It is safe for concurrent use.
type Transports struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]*sharedTransport
}

type sharedTransport struct {
	tr   *http.Transport
	refs int
}

// NewTransports returns an empty set of shared transports.
func NewTransports() *Transports {
	return &Transports{m: map[[sha256.Size]byte]*sharedTransport{}}
}

// New returns a client for cfg, as the package's New does, whose HTTP transport is shared
// with the Clients of ts that reach the same server the same way. Its Close gives the
// transport back; the last Client to close it closes its idle connections.
func (ts *Transports) New(cfg *Config) (*Client, error) {
	if ts == nil {
		return New(cfg)
	}
	return newClient(cfg, ts)
}

// Len returns how many transports the Clients of ts use.
func (ts *Transports) Len() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.m)
}

// acquire returns the transport of cfg and the Client's Close: from ts, else one of its
// own made by mk.
func (ts *Transports) acquire(cfg *Config, base *url.URL, mk func() *http.Transport) (*http.Transport, func(), error) {
	if ts == nil {
		tr := mk()
		return tr, tr.CloseIdleConnections, nil
	}
	key, err := transportKey(cfg, base)
	if err != nil {
		return nil, nil, err
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	st := ts.m[key]
	if st == nil {
		st = &sharedTransport{tr: mk()}
		ts.m[key] = st
	}
	st.refs++
	var once sync.Once
	return st.tr, func() {
		once.Do(func() {
			ts.mu.Lock()
			st.refs--
			last := st.refs == 0
			if last {
				delete(ts.m, key)
			}
			ts.mu.Unlock()
			if last {
				st.tr.CloseIdleConnections()
			}
		})
	}, nil
}

// transportKey digests what cfg's transport depends on (the files it names are read: a
// rotated CA or client certificate makes another key).
func transportKey(cfg *Config, base *url.URL) ([sha256.Size]byte, error) {
	h := sha256.New()
	field := func(b []byte) {
		_ = binary.Write(h, binary.LittleEndian, uint64(len(b)))
		h.Write(b)
	}
	file := func(data []byte, path string) error {
		if len(data) == 0 && path != "" {
			var err error
			if data, err = os.ReadFile(path); err != nil {
				return fmt.Errorf("apiclient: %w", err)
			}
		}
		field(data)
		return nil
	}
	field([]byte(base.Scheme + "://" + base.Host))
	t := cfg.TLS
	for _, f := range [][2]any{{t.CAData, t.CAFile}, {t.CertData, t.CertFile}, {t.KeyData, t.KeyFile}} {
		if err := file(f[0].([]byte), f[1].(string)); err != nil {
			return [sha256.Size]byte{}, err
		}
	}
	exec := []byte(nil)
	if cfg.Exec != nil {
		var err error
		if exec, err = json.Marshal(cfg.Exec); err != nil {
			return [sha256.Size]byte{}, fmt.Errorf("apiclient: exec plugin configuration: %w", err)
		}
	}
	field(exec)
	field([]byte(fmt.Sprintf("%q %t %q %d %d %x", t.ServerName, t.Insecure, cfg.ProxyURL,
		cfg.DialTimeout, cfg.TLSHandshakeTimeout, funcID(cfg.Dial))))
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key, nil
}

// funcID identifies a func value: copies of one value have the same, two closures (or two
// method values of one method on two receivers) differ. Zero for nil.
func funcID[F any](f F) uintptr {
	return uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&f)))
}
