package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/internal/testobj"
)

// endedWatch is a finished watch that reports err from Err, as apiclient's watchers do once
// their ResultChan is closed. Only streamError's input: the reflector's own behaviour on a
// broken connection is tested against apitest (TestLostConnectionIsReportedAndRewatchesWithoutRelist).
type endedWatch struct{ err error }

func (w endedWatch) Stop() {}
func (w endedWatch) ResultChan() <-chan apiclient.Event[*testobj.ConfigMap] {
	ch := make(chan apiclient.Event[*testobj.ConfigMap])
	close(ch)
	return ch
}
func (w endedWatch) Err() error { return w.err }

// deadlineError is the error a read past its deadline returns on a real connection: what
// apiclient's WebSocket watch reports when its health check finds the connection dead
// (apiclient's TestWebSocketHealthCheckEndsAWatchOnADeadConnection).
func deadlineError(t *testing.T) error {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if err := a.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err := a.Read(make([]byte, 1))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past the deadline: %v, want a net.Error timeout", err)
	}
	return err
}

// A dead connection closed by the WebSocket read deadline is a lost connection, not a clean
// close (issue 11: it used to be logged once at debug level and counted nowhere); a Stop or
// the reflector's own context ending is not.
func TestStreamErrorTellsALostConnectionFromACleanClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		lost bool
	}{
		{"clean close", nil, false},
		{"context canceled", context.Canceled, false},
		{"context deadline", fmt.Errorf("watch: %w", context.DeadlineExceeded), false},
		{"read deadline", deadlineError(t), true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := streamError[*testobj.ConfigMap](endedWatch{tc.err})
			if got := errors.Is(err, ErrConnectionLost); got != tc.lost {
				t.Fatalf("streamError(%v) = %v, lost %v, want %v", tc.err, err, got, tc.lost)
			}
			if tc.lost && !errors.Is(err, tc.err) {
				t.Fatalf("streamError(%v) = %v does not wrap the transport error", tc.err, err)
			}
		})
	}
	// A watcher that cannot tell why it ended is taken for a clean close.
	var plain apiclient.Watcher[*testobj.ConfigMap] = struct {
		apiclient.Watcher[*testobj.ConfigMap]
	}{endedWatch{io.ErrUnexpectedEOF}}
	if err := streamError(plain); err != nil {
		t.Fatalf("streamError of a watcher without Err = %v", err)
	}
}
