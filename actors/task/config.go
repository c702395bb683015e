package task

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/task/taskrt"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Registry is where the scheduler finds task actors. An idle actor leaves
// it before it stops, so that nobody sends it anything after its last
// message: every message for a task that may find it leaving (commands,
// ticks) goes through the Registry.
type Registry interface {
	// Leave stops handing out self for task id to new callers and, while no
	// caller can send to self, calls send (which queues the actor's last
	// message to itself). Callers that arrive meanwhile wait for Left.
	Leave(id uuid.UUID, self *actor.PID, send func())
	// Left ends a Leave: stopped true removes self; false (the task needed
	// its actor again in the meantime) hands out self again. rest, when
	// stopped, is the resting task's state and pos the position of its
	// latest event (rest nil: never created, or its load failed): the
	// Registry keeps them and starts the next actor of the task from them
	// (Initial.Tracked), with no store read. A task deleted with nothing
	// open (rules.Idle) needs no actor again, but its state is handed over
	// too: it is the last word on the task (snapshots). rest is the
	// stopping actor's own, valid only during the call: the Registry
	// copies what it keeps.
	//
	// An actor stopped from outside (the scheduler stopping) calls Left
	// too, without a Leave, stopped true: rest is then its state whatever
	// it is — open runs and all (rules.Rests false) — and is handed over
	// only when it holds every event of the stream the actor appended or
	// loaded; an actor that cannot say so (an append that failed as it
	// stopped) calls nothing.
	Left(id uuid.UUID, self *actor.PID, stopped bool, rest *rules.State, pos events.Position)
}

// Recorder is a Registry that keeps the record of a task's state while its
// actor lives (snapshots): an actor that has recorded Config.RecordEvery
// events since its state was last recorded hands it over, on its
// goroutine. st is the actor's own, valid only during the call; it is the
// exact fold of the task's stream up to st.Version, and pos the position
// of that event.
type Recorder interface {
	Record(id uuid.UUID, st *rules.State, pos events.Position)
}

// Retrier is a Registry told of a tick the actor could not decide because
// its task's load failed: the due-time index forgot the task when it sent
// the tick, so the Registry keeps the task scheduled (it sends a tick
// again later). Called on the actor's goroutine.
type Retrier interface {
	RetryTick(id uuid.UUID, err error)
}

// Lister is a Registry that keeps the owners' index (R6): told, on the
// actor's goroutine, once a recorded creation or deletion of the task is
// applied (rules.Listed) and before the command that recorded it is
// answered; and where the task stands, before a Refresh is answered (the
// creations and deletions of other writers it took in).
type Lister interface {
	Listed(id uuid.UUID, owner, name string, listed bool)
}

// Pinner is a Registry told when an actor is pinned (Get.Pin), once per
// actor, on the actor's goroutine: the scheduler leaves pinned actors out
// of its bound on a wave's actors.
type Pinner interface {
	Pinned(id uuid.UUID, self *actor.PID)
}

// Config is what a task actor needs.
type Config struct {
	Store events.Store
	// Archetype is the clock and logger; a Virtual clock makes the actor
	// deterministic.
	Archetype archetype.Archetype
	// Queue receives a worker.Enqueued for each run enqueued or recovered.
	Queue *actor.PID
	// Enqueue, if set, puts such a run on the queue directly instead
	// (worker.Queue.Enqueue, the queue of the actor at Queue); when it
	// reports false the run is sent to Queue.
	Enqueue func(worker.Enqueued) bool
	// Shard receives a dueindex.Track whenever nextRun or the status changes.
	Shard *actor.PID
	// Registry, if set, is told when the actor stops (see Registry). Nil: the
	// actor stops without telling anyone.
	Registry Registry
	// StoreTimeout bounds each store call (a read or an append). Default
	// DefaultStoreTimeout. It is measured on the wall clock: it guards real
	// I/O, which virtual time does not see.
	StoreTimeout time.Duration
	// Host, if set, recognizes a message a host actor sent (one that no
	// cronactor component sends) and says how to answer it. Nil: the
	// actor answers only cronactor's own messages.
	Host func(msg any) (HostRequest, bool)
	// Load, if set, loads the task's state: the state and the position of
	// its latest event, or an error matching events.ErrStreamNotFound when
	// the task has no stream. It runs on a goroutine of its own, within a
	// context bounded by StoreTimeout. Nil: the actor reads its whole
	// stream.
	Load func(ctx context.Context, id uuid.UUID) (rules.State, events.Position, error)
	// RecordEvery is how many events the actor may record before it hands
	// its state to the Registry (Recorder) again, so that a later load
	// reads at most about that many events after a snapshot. 0: never.
	RecordEvery int
	// HistoryRetention is the history retention of tasks that set none of
	// their own (DESIGN §8.3); zero keeps everything. Retention needs a
	// store that implements events.Truncater; with another, tasks keep
	// their whole history (see retain.go).
	HistoryRetention time.Duration
	// Rest makes the actor of a resting task (rules.Rests, no timer, not
	// pinned by Get.Pin) leave and stop after each message, its state
	// handed to Registry.Left. False: only an actor whose task needs none
	// stops.
	Rest bool
	// Runtime, if set, is the runtime the actor is spawned under (spawn it
	// with Runtime.Props): the actor's object comes from it and goes back
	// to it once stopped, and its mailbox tells the actor when nothing
	// waits, so that it passivates without a message to itself. Nil: a new
	// object for every actor. See NewRuntime.
	Runtime *taskrt.Runtime
}

// New returns the producer of the actor for task id. With initial nil the
// actor loads its stream when it starts; otherwise initial is the state the
// caller already folded from the log (recovery reads the log once for all).
func New(cfg Config, id uuid.UUID, initial *Initial) actor.Producer {
	cfg = cfg.withDefaults()
	return func() actor.Actor { return newActor(&cfg, id, initial) }
}

// withDefaults is cfg with its defaults filled in.
func (cfg Config) withDefaults() Config {
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = DefaultStoreTimeout
	}
	cfg.Archetype = cfg.Archetype.WithDefaults()
	return cfg
}

// newActor is an Actor for task id, from the pool (see reuseActor), with
// cfg (defaults filled in) and, unless nil, initial.
func newActor(cfg *Config, id uuid.UUID, initial *Initial) *Actor {
	stream := events.TaskStream(id)
	scope := newScope(stream)
	// stream is a string of its own, not a prefix of scope: the store may
	// keep it (the embedded store's head versions do) long after the actor
	// rested, and it is the shorter one.
	// beats and beatTimers are made by the first run watched for
	// heartbeats: most tasks have none, and an actor is started for every
	// run of a resting task.
	a := reuseActor(cfg.Runtime)
	a.cfg, a.id, a.stream, a.idScope = *cfg, id, stream, scope
	if initial != nil {
		a.state, a.pos, a.loaded, a.tracked = initial.State, initial.Position, true, initial.Tracked
		a.recorded = a.state.Version
	}
	return a
}

// newScope is stream, a NUL and a new random ID (Actor.idScope), made in
// one allocation.
func newScope(stream string) string {
	// Unique, not secret: math/rand/v2's generator (seeded at random per
	// process) rather than uuid.New's read of crypto/rand, which puts the
	// ID on the heap.
	var id uuid.UUID
	binary.LittleEndian.PutUint64(id[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(id[8:], rand.Uint64())
	id[6] = (id[6] & 0x0f) | 0x40 // version 4
	id[8] = (id[8] & 0x3f) | 0x80 // RFC 4122 variant
	var text [36]byte
	var b strings.Builder
	b.Grow(len(stream) + 1 + len(text))
	b.WriteString(stream)
	b.WriteByte(0)
	b.Write(events.AppendUUID(text[:0], id))
	return b.String()
}

// NewFrom returns the producer of the actor for task id whose state read
// fills in, with the position of its latest event: a resting task's
// record, decoded straight into the new actor (New would copy it there
// from an Initial of its own). The due-time index holds the task already
// (Initial.Tracked). When read fails, the actor loads its stream when it
// starts, as New(cfg, id, nil) does.
func NewFrom(cfg Config, id uuid.UUID, read func(*rules.State, *events.Position) error) actor.Producer {
	cfg = cfg.withDefaults()
	// One closure, not New's inside another: an actor is started from its
	// record for every run of a resting task.
	return func() actor.Actor {
		a := newActor(&cfg, id, nil)
		if err := read(&a.state, &a.pos); err != nil {
			a.state, a.pos = rules.State{}, events.Position{}
			return a
		}
		a.loaded, a.tracked, a.recorded = true, true, a.state.Version
		return a
	}
}
