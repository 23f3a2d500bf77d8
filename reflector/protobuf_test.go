package reflector

import (
	"errors"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// Over protobuf (what apiclient asks for built-in kinds by default), on both watch
// transports: an ERROR event with a 410 Status makes the reflector relist, and a frame that
// does not decode ends the watch with a typed error and a relist; the store ends with what
// the server holds, nothing lost.
func TestProtobufWatchErrorsRelist(t *testing.T) {
	for _, proto := range []struct {
		name string
		p    apiclient.WatchProtocol
	}{{"chunked", apiclient.WatchChunked}, {"websocket", apiclient.WatchWebSocket}} {
		for _, fault := range []string{"410", "corrupt"} {
			t.Run(proto.name+"/"+fault, func(t *testing.T) {
				e := newEnvProto(t, proto.p, apitest.Options{})
				e.create("a")
				rec := newRecStore()
				r := e.run(e.options(rec))
				synced(t, rec, 1)
				w := e.waitWatch(0)
				if w.MediaType != "application/vnd.kubernetes.protobuf" {
					t.Fatalf("the watch is %s", w.MediaType)
				}
				e.create("b")
				switch fault {
				case "410":
					e.must(e.srv.Faults().ExpireWatches(cms))
					e.waitError("410", meta.IsResourceExpired)
				case "corrupt":
					e.must(e.srv.Faults().SendCorruptFrame(cms))
					e.waitError("decode error", func(err error) bool {
						var de *apiclient.DecodeError
						return errors.Is(err, apiclient.ErrMalformedEvent) && errors.As(err, &de)
					})
				}
				synced(t, rec, 2)
				e.create("c")
				e.waitContent(rec)
				if st := r.Stats(); st.Relists == 0 {
					t.Fatalf("no relist: %+v", st)
				}
				if w := e.waitWatch(w.ID); w.MediaType != "application/vnd.kubernetes.protobuf" {
					t.Fatalf("the new watch is %s", w.MediaType)
				}
			})
		}
	}
}
