package embedded

import "time"

// Tuning values of the store, with what each is based on. The figures come
// from `cronactor bench store` on the 2-core build machine
// (docs/decisions/0001-embedded-store.md has the runs).
const (
	// defaultMemTableSize is Pebble's memtable size when Options leaves it
	// zero: 4 MiB, Pebble's own default. A 64 MiB memtable measured slower
	// (64 writers: 64-85k events/s against 88-98k), because each fresh
	// memtable arena is paid for in page faults while a group is applied; a
	// small memtable also keeps the daemon's memory down.
	defaultMemTableSize = 4 << 20
	// l0CompactionThreshold and l0StopWritesThreshold are Pebble's L0
	// read amplification that starts a compaction and the one that stops
	// writes (Pebble's defaults: 4 and 12). Every flushed file of the log
	// spans the whole key space (the stream index's keys are as random as
	// the task IDs), so at the defaults a wave merged its L0 files into the
	// base level again and again: 14-19% of a 100,000-task wave's CPU. At
	// 16 and 48 the merging waits until after the wave (docs/performance.md,
	// "CPU per run in a wave"). Reads of the log's recent part merge more
	// files meanwhile; a restart reads the snapshots, not the log.
	l0CompactionThreshold = 16
	l0StopWritesThreshold = 48
	// compactionPace is how long a compaction pauses per unit of its work
	// (pace.go): 2, at most a third of a core. The one ratio measured
	// (docs/performance.md, "Compactions and sweeps take their time"), not
	// an optimum.
	compactionPace = 2
	// pacePeriod is how much work a compaction does between two pauses.
	// Not measured as an optimum: long enough that a pause is not lost in
	// the timer's slack, short enough that a tick's burst never waits
	// behind a whole compaction.
	pacePeriod = 2 * time.Millisecond
	// pacedSublevels is L0's depth from which compactions are not paced:
	// halfway from l0CompactionThreshold to l0StopWritesThreshold, so that
	// a store whose compactions fall behind catches up before its appends
	// would wait.
	pacedSublevels = (l0CompactionThreshold + l0StopWritesThreshold) / 2
	// deepEvery is how often a paced compaction reads L0's depth: a flush
	// adds a sublevel at most every few tens of milliseconds.
	deepEvery = 50 * time.Millisecond
	// pacedSnapshotSublevels is the same for the snapshot table, which
	// keeps Pebble's thresholds (4 and 12).
	pacedSnapshotSublevels = (4 + 12) / 2
	// minMemTableSize is the smallest memtable Options accepts (1 MiB). It is
	// a floor against misconfiguration, not a measured optimum: below it every
	// few groups would rotate the memtable and its write-ahead log.
	minMemTableSize = 1 << 20
	// defaultMaxBatchEvents caps the events of one group commit. Not a
	// measured optimum: with 64 writers a group carries about 60 appends, far
	// below it; the cap bounds a group's batch (and its memory) when many
	// writers or large appends queue at once.
	defaultMaxBatchEvents = 8192
	// maxAnsweredYields bounds how often the committer yields before cutting
	// a group, waiting for the writers the last group answered to queue again.
	// Yielding took groups from about 32 to about 60 of 64 appends (88k -> 94k
	// events/s with a 4 MiB memtable); the queue stops growing well within
	// 32 yields, and a lone writer pays one.
	maxAnsweredYields = 32
	// subscribePage bounds how many events a subscriber holds in memory at
	// once. Not measured: large enough that a catching-up subscriber reads in
	// few iterator passes, small enough (~100 KiB of 200-byte events) to be
	// negligible per subscriber.
	subscribePage = 512
	// tailBytes bounds the newest durable records the store keeps in memory
	// for subscribers at the head (tail.go): about 7,000 records of a wave,
	// a few dozen groups. Not a measured optimum: a subscriber a group or
	// two behind, as the bench's and the daemon's projections are, reads
	// from it; one further behind reads Pebble until it catches up.
	tailBytes = 2 << 20
	// maxPagePrealloc bounds the records a read of the global log makes
	// room for at once, whatever its limit.
	maxPagePrealloc = 4096
	// defaultMinFreeBytes is the free space below which appends are refused
	// (Options.MinFreeBytes). Not measured as an optimum: it is room for what
	// Pebble writes after appends stop — flushing the memtable (at most
	// defaultMemTableSize), starting a new log, rewriting its manifest, and
	// its first compactions — because Pebble v1.1 treats a failed manifest
	// write as fatal. It is checked (one statfs) before every group, which
	// costs about a microsecond against a group's fsync of hundreds.
	defaultMinFreeBytes = 64 << 20
	// markerReadLimit bounds how much of the format marker and the clean
	// shutdown file is read: both are a line of JSON, so anything longer is
	// not ours.
	markerReadLimit = 4096
)
