package postgres

import (
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
)

// hold keeps the appends of a group whose commit may have landed, its
// answer lost with a connection the server broke (a crash, an immediate
// shutdown, a failover), while the server cannot be reached to say. A
// goroutine of its own tries the group again every probeInterval once the
// server answers: retried recognises, by the event IDs, the appends that
// landed, and writes the ones that did not, so each caller gets the true
// outcome instead of a failure that may be false. The committer goes on
// meanwhile: other appends fail at once while the server is away.
//
// A held append waits at most Options.OpTimeout, then fails with the
// error that held it (its caller is unsure, as before); Close ends the
// wait with that error too.
func (s *Store) hold(batch []*appendReq, cause error) {
	s.log.Warn("postgres append group's outcome unknown: held until the server answers",
		"appends", len(batch), "error", cause, "for_at_most", s.opts.OpTimeout)
	s.bg.Add(1)
	go s.resolve(batch, cause)
}

func (s *Store) resolve(batch []*appendReq, cause error) {
	defer s.bg.Done()
	giveUp := time.Now().Add(s.opts.OpTimeout)
	fail := func(err error) {
		err = fmt.Errorf("postgres: append (outcome unknown): %w", classify(err))
		s.failed(len(batch))
		s.log.Warn("postgres held append group failed", "error", err, "appends", len(batch))
		for _, r := range batch {
			r.result, r.err = events.AppendResult{}, err
			r.answer()
		}
	}
	for {
		select {
		case <-s.done:
			fail(cause)
			return
		case <-time.After(probeInterval):
		}
		if s.isDown() && time.Now().Before(giveUp) {
			continue
		}
		for _, r := range batch {
			r.result, r.err = events.AppendResult{}, nil
		}
		last, err := s.commitTx(batch, true)
		if err == nil {
			s.answered()
			if last > 0 {
				s.advance(last)
			}
			s.log.Info("postgres held append group decided", "appends", len(batch))
			for _, r := range batch {
				r.answer()
			}
			return
		}
		if !unavailable(err) || !time.Now().Before(giveUp) {
			fail(err)
			return
		}
		cause = err
	}
}
