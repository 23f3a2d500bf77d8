package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/internal/protodec"
)

// protoLW is the protobuf prototype's ListerWatcher (impl=informerkit-proto): LIST and
// WATCH of a built-in collection with Accept: application/vnd.kubernetes.protobuf, each
// object decoded by internal/protodec into the informer's Go type (managedFields skipped,
// strings interned through the informer's sharer). Not part of apiclient: it measures what
// adopting protobuf for built-in kinds would give.
type protoLW[T meta.Object] struct {
	client  *http.Client
	base    string
	path    string
	item    *kubeschema.Type
	list    *kubeschema.Type
	decode  apiclient.DecodeOptions
	workers sync.WaitGroup
}

func newProtoLW[T meta.Object](client *http.Client, base, resource, kind string) (*protoLW[T], error) {
	ki, ok := kubeschema.ForKind("", "v1", kind)
	if !ok {
		return nil, fmt.Errorf("no schema for v1 %s", kind)
	}
	li, ok := kubeschema.ForKind("", "v1", kind+"List")
	if !ok {
		return nil, fmt.Errorf("no schema for v1 %sList", kind)
	}
	return &protoLW[T]{client: client, base: base, path: "/api/v1/" + resource, item: ki.Type, list: li.Type}, nil
}

// WithDecodeOptions takes the informer's decoding options (apiclient.DecodeTunable).
func (l *protoLW[T]) WithDecodeOptions(o apiclient.DecodeOptions) apiclient.ListerWatcher[T] {
	cp := &protoLW[T]{client: l.client, base: l.base, path: l.path, item: l.item, list: l.list, decode: o}
	return cp
}

func (l *protoLW[T]) decoder() *protodec.Decoder {
	return protodec.NewDecoder(protodec.Options{OmitManagedFields: l.decode.OmitManagedFields, Strings: l.decode.Strings})
}

func (l *protoLW[T]) get(ctx context.Context, q url.Values) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.base+l.path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", kubeproto.MediaType)
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		st := &meta.Status{Code: int32(resp.StatusCode), Message: string(b)}
		if resp.StatusCode == http.StatusGone {
			st.Reason = meta.StatusReasonExpired
		}
		return nil, st
	}
	return resp, nil
}

func (l *protoLW[T]) List(ctx context.Context, opts apiclient.ListOptions) (*meta.List[T], error) {
	resp, err := l.get(ctx, opts.Query(false))
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	env, err := kubeproto.Unwrap(body)
	if err != nil {
		return nil, err
	}
	out := &meta.List[T]{}
	d := l.decoder()
	// PodList: metadata = 1 (ListMeta: resourceVersion = 2, continue = 3), items = 2.
	err = fields(env.Raw, func(num int, b []byte) error {
		switch num {
		case 1:
			return fields(b, func(n int, v []byte) error {
				switch n {
				case 2:
					out.ResourceVersion = string(v)
				case 3:
					out.Continue = string(v)
				}
				return nil
			})
		case 2:
			var item T
			if err := protodec.Decode(d, l.item, b, &item); err != nil {
				return err
			}
			out.Items = append(out.Items, item)
		}
		return nil
	})
	return out, err
}

// fields calls fn with every length-delimited field of a message (others are skipped).
func fields(b []byte, fn func(num int, v []byte) error) error {
	for i := 0; i < len(b); {
		key, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return errors.New("protobuf: bad key")
		}
		i += n
		switch key & 7 {
		case 0:
			_, n := binary.Uvarint(b[i:])
			if n <= 0 {
				return errors.New("protobuf: bad varint")
			}
			i += n
		case 2:
			l, n := binary.Uvarint(b[i:])
			if n <= 0 || l > uint64(len(b)-i-n) {
				return errors.New("protobuf: bad length")
			}
			i += n
			if err := fn(int(key>>3), b[i:i+int(l)]); err != nil {
				return err
			}
			i += int(l)
		default:
			return fmt.Errorf("protobuf: wire type %d", key&7)
		}
	}
	return nil
}

type protoWatcher[T any] struct {
	ch     chan apiclient.Event[T]
	cancel context.CancelFunc
	done   chan struct{}
}

func (w *protoWatcher[T]) ResultChan() <-chan apiclient.Event[T] { return w.ch }
func (w *protoWatcher[T]) Stop()                                 { w.cancel(); <-w.done }

func (l *protoLW[T]) Watch(ctx context.Context, opts apiclient.ListOptions) (apiclient.Watcher[T], error) {
	ctx, cancel := context.WithCancel(ctx)
	resp, err := l.get(ctx, opts.Query(true))
	if err != nil {
		cancel()
		return nil, err
	}
	w := &protoWatcher[T]{ch: make(chan apiclient.Event[T]), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer close(w.ch)
		defer resp.Body.Close()
		d := l.decoder()
		r := bufio.NewReaderSize(resp.Body, 64<<10)
		var frame []byte
		for {
			var hdr [4]byte
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				return
			}
			n := int(binary.BigEndian.Uint32(hdr[:]))
			if cap(frame) < n {
				frame = make([]byte, n)
			}
			frame = frame[:n]
			if _, err := io.ReadFull(r, frame); err != nil {
				return
			}
			ev, err := l.event(d, frame)
			if err != nil {
				ev = apiclient.Event[T]{Type: apiclient.Error, Err: err}
			}
			select {
			case w.ch <- ev:
			case <-ctx.Done():
				return
			}
			if ev.Type == apiclient.Error {
				return
			}
		}
	}()
	return w, nil
}

// event decodes a WatchEvent: type = 1, object = 2 (RawExtension: raw = 1, the enveloped
// object).
func (l *protoLW[T]) event(d *protodec.Decoder, frame []byte) (apiclient.Event[T], error) {
	var ev apiclient.Event[T]
	var raw []byte
	err := fields(frame, func(num int, b []byte) error {
		switch num {
		case 1:
			ev.Type = apiclient.EventType(b)
		case 2:
			return fields(b, func(n int, v []byte) error {
				if n == 1 {
					raw = v
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return ev, err
	}
	env, err := kubeproto.Unwrap(raw)
	if err != nil {
		return ev, err
	}
	if ev.Type == apiclient.Error {
		return ev, &meta.Status{Code: 500, Message: "ERROR watch event (protobuf Status not decoded by the prototype)"}
	}
	var obj T
	if err := protodec.Decode(d, l.item, env.Raw, &obj); err != nil {
		return ev, err
	}
	ev.Object = obj
	return ev, nil
}
