package apiclient

import "sync"

// discoveryCache holds the resources the server serves (see Discovery).
type discoveryCache struct {
	mu sync.Mutex
}
