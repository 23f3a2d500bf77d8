package informer

import "github.com/informerkit/informerkit/internal/share"

// sharer is what the informer needs of the structural-sharing engine (internal/share; see
// the package documentation, "Structural sharing").
type sharer[T any] interface {
	Share(obj T) T
	ShareLike(obj, prev T) T
	String(b []byte) string
	Stats() share.Stats
}

// SharingStats are the figures of an informer's structural sharing (see
// Options.DisableSharing).
type SharingStats struct {
	// Enabled is false when the informer does not share.
	Enabled bool
	// Entries is the number of canonical values the sharer's table holds (including values
	// already freed that the next sweep drops).
	Entries int
	// Hits counts sub-values replaced by an identical canonical one; Inserts counts
	// canonical values added.
	Hits, Inserts uint64
	// SavedBytes approximates the bytes of the sub-values dropped by those hits.
	SavedBytes uint64
}

func sharingStats[T any](s sharer[T]) SharingStats {
	if s == nil {
		return SharingStats{}
	}
	st := s.Stats()
	return SharingStats{Enabled: true, Entries: st.Entries, Hits: st.Hits, Inserts: st.Inserts, SavedBytes: st.SavedBytes}
}

// withSharing returns transform followed by sharing (transform alone when s is nil). An
// object the cache holds a version of (prev) is shared with that version first: most of an
// update is what the object was, and one comparison shares it without the table.
func withSharing[T any](transform func(T) (T, error), s sharer[T], prev func(T) (T, bool)) func(T) (T, error) {
	if s == nil {
		return transform
	}
	return func(obj T) (T, error) {
		if transform != nil {
			var err error
			if obj, err = transform(obj); err != nil {
				return obj, err
			}
		}
		if old, ok := prev(obj); ok {
			return s.ShareLike(obj, old), nil
		}
		return s.Share(obj), nil
	}
}
