package apiclient

import "time"

// SetWebSocketHealthCheck shortens the WebSocket health check of the watches opened from now
// on, for tests; restore puts the defaults back.
func SetWebSocketHealthCheck(ping, readTimeout time.Duration) (restore func()) {
	oldPing, oldRead := wsPingInterval, wsReadTimeout
	wsPingInterval, wsReadTimeout = ping, readTimeout
	return func() { wsPingInterval, wsReadTimeout = oldPing, oldRead }
}
