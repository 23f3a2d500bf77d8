package workqueue

// Op is the operation an Observation reports.
type Op uint8

// The operations a queue reports to Config.Observe.
const (
	// OpAdd: Add, AddWithPriority, or a delay (AddAfter, AddRateLimited) that ended.
	OpAdd Op = iota + 1
	// OpGet: Get handed the item to a worker.
	OpGet
	// OpDone: the worker called Done.
	OpDone
)

// String returns "add", "get" or "done".
func (o Op) String() string {
	switch o {
	case OpAdd:
		return "add"
	case OpGet:
		return "get"
	case OpDone:
		return "done"
	}
	return "Op(?)"
}

// State is an item's state in a queue: client-go's queue keeps it as two sets, dirty and
// processing; this queue as two flags on the item's entry.
type State struct {
	// Dirty: the item needs processing: it waits to be handed out, or it was added again
	// while a worker holds it, and Done will queue it again.
	Dirty bool
	// Processing: a worker holds the item (between Get and Done).
	Processing bool
}

// Observation is one operation on one item, reported to Config.Observe with the item's
// state before and after it. An Add whose Before is already Dirty changed nothing: the
// queue deduplicated it.
type Observation struct {
	Op            Op
	Item          any
	Before, After State
	// Priority is the item's priority after the operation (0 without Config.Priorities).
	Priority int
}

// observe reports op on the entry idx whose state was before. Caller holds q.mu.
func (q *queue[T]) observe(op Op, idx uint32, before uint8) {
	e := &q.slab[idx]
	q.observer(Observation{Op: op, Item: e.item, Priority: int(e.prio),
		Before: State{Dirty: before&flagDirty != 0, Processing: before&flagProcessing != 0},
		After:  State{Dirty: e.flags&flagDirty != 0, Processing: e.flags&flagProcessing != 0}})
}
