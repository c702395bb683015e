package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/google/uuid"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func ev(label string) events.Proposed {
	return events.Proposed{ID: uuid.New(), Type: "TestHappened", Schema: 1, At: time.Unix(0, 1234567891).UTC(), Data: []byte(label)}
}

// One group carries appends to several streams, one of them conflicting and
// two to the same stream: the conflict fails alone, the rest land, in the
// group's order, at contiguous positions.
func TestGroupConflictFailsOnlyItsAppend(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, b := events.TaskStream(uuid.New()), events.TaskStream(uuid.New())
	if _, err := s.Append(ctx, b, events.NoStream, ev("b0")); err != nil {
		t.Fatal(err)
	}
	req := func(stream string, exp events.ExpectedVersion, label string) *appendReq {
		return &appendReq{stream: stream, expected: exp, evs: []events.Proposed{ev(label)}, done: make(chan struct{}, 1)}
	}
	batch := []*appendReq{
		req(a, events.NoStream, "a0"),
		req(b, events.NoStream, "b-conflict"), // b exists
		req(a, events.Exactly(0), "a1"),       // after a0, in the same group
		req(b, events.Exactly(0), "b1"),
	}
	s.commit(batch)
	for i, r := range batch {
		<-r.done
		if i == 1 {
			var vc *events.VersionConflictError
			if !errors.As(r.err, &vc) || !vc.ActualExists || vc.Actual != 0 {
				t.Fatalf("append 1: %v, want a conflict at version 0", r.err)
			}
			continue
		}
		if r.err != nil {
			t.Fatalf("append %d: %v", i, r.err)
		}
	}
	if batch[0].result.Version != 0 || batch[2].result.Version != 1 || batch[3].result.Version != 1 {
		t.Fatalf("versions %d %d %d, want 0 1 1", batch[0].result.Version, batch[2].result.Version, batch[3].result.Version)
	}
	p0 := batch[0].result.Position.Commit
	if batch[2].result.Position.Commit != p0+1 || batch[3].result.Position.Commit != p0+2 {
		t.Fatalf("positions %d %d %d: want contiguous in group order", p0, batch[2].result.Position.Commit, batch[3].result.Position.Commit)
	}
	recs, err := s.ReadStream(ctx, b, 0, 0)
	if err != nil || len(recs) != 2 || string(recs[1].Data) != "b1" {
		t.Fatalf("stream b: %v, %v", recs, err)
	}
	if h := s.Head(); h.Commit != p0+2 {
		t.Fatalf("head %s after the group, want %d", h, p0+2)
	}
}

// A group commits but its answer is lost with the connection (the server
// killed it right after COMMIT): the committer goes again, recognises by
// the event IDs what landed, and answers the appends with their results:
// no caller sees a failure for an append that is in the log, and nothing
// is written twice.
func TestLostCommitAnswerIsRecognised(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := events.TaskStream(uuid.New())
	if _, err := s.Append(ctx, st, events.NoStream, ev("first")); err != nil {
		t.Fatal(err)
	}
	lost := 0
	loseCommitAnswer = func() error {
		if lost == 0 {
			lost++
			return fmt.Errorf("read: %w", io.ErrUnexpectedEOF)
		}
		return nil
	}
	defer func() { loseCommitAnswer = nil }()
	res, err := s.Append(ctx, st, events.Exactly(0), ev("second"), ev("third"))
	if err != nil {
		t.Fatalf("append whose commit answer was lost: %v", err)
	}
	if lost != 1 || res.Version != 2 {
		t.Fatalf("lost %d answers, result version %d; want 1 and 2", lost, res.Version)
	}
	recs, err := s.ReadStream(ctx, st, 0, 0)
	if err != nil || len(recs) != 3 {
		t.Fatalf("stream after the retry: %d events, %v; want 3", len(recs), err)
	}
	if st := s.WriteStatus(); st.Err != nil {
		t.Fatalf("WriteStatus after a recognised retry: %v", st.Err)
	}
}

// The server stops right after a group committed, its answer lost: the
// appends are held, not failed, while the server is away, and answered
// with their true outcome (landed, recognised by their IDs) once it is
// back; an append sent meanwhile fails at once, as appends do while the
// server is away.
func TestUnknownOutcomeHeldUntilTheServerAnswers(t *testing.T) {
	srv := pgtest.Start(t)
	url, err := srv.CreateDatabase("held")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := Open(ctx, url, Options{OpTimeout: 20 * time.Second, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := events.TaskStream(uuid.New())
	if _, err := s.Append(ctx, st, events.NoStream, ev("first")); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	loseCommitAnswer = func() error {
		select {
		case <-stopped:
			return nil
		default:
		}
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
		close(stopped)
		return fmt.Errorf("read: %w", io.ErrUnexpectedEOF)
	}
	defer func() { loseCommitAnswer = nil }()
	type outcome struct {
		res events.AppendResult
		err error
	}
	held := make(chan outcome, 1)
	go func() {
		res, err := s.Append(ctx, st, events.Exactly(0), ev("second"))
		held <- outcome{res, err}
	}()
	<-stopped
	// Another stream's append while the server is away fails at once.
	if _, err := s.Append(ctx, events.TaskStream(uuid.New()), events.NoStream, ev("other")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("append while the server is away: %v, want ErrUnavailable", err)
	}
	select {
	case o := <-held:
		t.Fatalf("the append whose outcome is unknown was answered while the server is away: %+v %v", o.res, o.err)
	default:
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-held:
		if o.err != nil || o.res.Version != 1 {
			t.Fatalf("the held append: version %d, %v; want version 1 (it landed)", o.res.Version, o.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the held append was not answered within 15 s of the server's return")
	}
	recs, err := s.ReadStream(ctx, st, 0, 0)
	if err != nil || len(recs) != 2 {
		t.Fatalf("stream: %d events, %v; want 2 (written once)", len(recs), err)
	}
}
