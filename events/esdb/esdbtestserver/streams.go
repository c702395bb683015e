package esdbtestserver

import (
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	api "github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// streamsService implements the Streams service over an eventLog.
type streamsService struct {
	api.UnimplementedStreamsServer
	log     *eventLog
	maxSize int
}

func empty() *shared.Empty { return &shared.Empty{} }

// Append reads the options message, then the proposed events until the
// client closes its side, and answers once.
func (s *streamsService) Append(srv api.Streams_AppendServer) error {
	first, err := srv.Recv()
	if err != nil {
		return err
	}
	opts := first.GetOptions()
	if opts == nil {
		return status.Error(codes.InvalidArgument, "append: the first message must carry the options")
	}
	stream := string(opts.GetStreamIdentifier().GetStreamName())
	if stream == "" {
		return status.Error(codes.InvalidArgument, "append: empty stream name")
	}
	var exp expectation
	switch v := opts.GetExpectedStreamRevision().(type) {
	case *api.AppendReq_Options_Any:
		exp.kind = expectAny
	case *api.AppendReq_Options_NoStream:
		exp.kind = expectNoStream
	case *api.AppendReq_Options_StreamExists:
		exp.kind = expectStreamExists
	case *api.AppendReq_Options_Revision:
		exp = expectation{kind: expectRevision, revision: v.Revision}
	default:
		return status.Error(codes.InvalidArgument, "append: no expected stream revision")
	}
	var evs []proposed
	size := 0
	for {
		m, err := srv.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		pm := m.GetProposedMessage()
		if pm == nil {
			return status.Error(codes.InvalidArgument, "append: options sent twice")
		}
		p, err := validateProposed(pm)
		if err != nil {
			return err
		}
		size += len(p.data) // the server counts event bodies only
		if size > s.maxSize {
			// As EventStoreDB: the whole append is refused.
			srv.SetTrailer(metadata.Pairs("exception", "maximum-append-size-exceeded", "maximum-append-size", strconv.Itoa(s.maxSize)))
			return status.Errorf(codes.InvalidArgument, "Maximum Append Size of %d Exceeded.", s.maxSize)
		}
		evs = append(evs, p)
	}
	out := s.log.append(stream, exp, evs)
	if out.wrong {
		return srv.SendAndClose(wrongExpectedVersion(exp, out))
	}
	ok := &api.AppendResp_Success{}
	if out.exists {
		ok.CurrentRevisionOption = &api.AppendResp_Success_CurrentRevision{CurrentRevision: out.current}
	} else {
		ok.CurrentRevisionOption = &api.AppendResp_Success_NoStream{NoStream: empty()}
	}
	if out.idempotent || (out.commit == 0 && out.prepare == 0) {
		// A recognised retry answers without a position, as EventStoreDB does.
		ok.PositionOption = &api.AppendResp_Success_NoPosition{NoPosition: empty()}
	} else {
		ok.PositionOption = &api.AppendResp_Success_Position{Position: &api.AppendResp_Position{CommitPosition: out.commit, PreparePosition: out.prepare}}
	}
	return srv.SendAndClose(&api.AppendResp{Result: &api.AppendResp_Success_{Success: ok}})
}

func validateProposed(pm *api.AppendReq_ProposedMessage) (proposed, error) {
	typ, ok := pm.GetMetadata()["type"]
	if !ok || typ == "" {
		return proposed{}, status.Error(codes.InvalidArgument, "append: event without a type")
	}
	ct, ok := pm.GetMetadata()["content-type"]
	if !ok || ct == "" {
		return proposed{}, status.Error(codes.InvalidArgument, "append: event without a content-type")
	}
	var id uuid.UUID
	switch v := pm.GetId().GetValue().(type) {
	case *shared.UUID_Structured_:
		id = uuidFromBits(v.Structured.GetMostSignificantBits(), v.Structured.GetLeastSignificantBits())
	case *shared.UUID_String_:
		parsed, err := uuid.Parse(v.String_)
		if err != nil {
			return proposed{}, status.Errorf(codes.InvalidArgument, "append: event id %q: %v", v.String_, err)
		}
		id = parsed
	default:
		return proposed{}, status.Error(codes.InvalidArgument, "append: event without an id")
	}
	return proposed{id: id, typ: typ, contentType: ct, data: pm.GetData(), meta: pm.GetCustomMetadata()}, nil
}

func wrongExpectedVersion(exp expectation, out appendOutcome) *api.AppendResp {
	w := &api.AppendResp_WrongExpectedVersion{}
	if out.exists {
		w.CurrentRevisionOption = &api.AppendResp_WrongExpectedVersion_CurrentRevision{CurrentRevision: out.current}
		w.CurrentRevisionOption_20_6_0 = &api.AppendResp_WrongExpectedVersion_CurrentRevision_20_6_0{CurrentRevision_20_6_0: out.current}
	} else {
		w.CurrentRevisionOption = &api.AppendResp_WrongExpectedVersion_CurrentNoStream{CurrentNoStream: empty()}
		w.CurrentRevisionOption_20_6_0 = &api.AppendResp_WrongExpectedVersion_NoStream_20_6_0{NoStream_20_6_0: empty()}
	}
	switch exp.kind {
	case expectAny:
		w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedAny{ExpectedAny: empty()}
	case expectNoStream:
		w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedNoStream{ExpectedNoStream: empty()}
	case expectStreamExists:
		w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedStreamExists{ExpectedStreamExists: empty()}
	default:
		w.ExpectedRevisionOption = &api.AppendResp_WrongExpectedVersion_ExpectedRevision{ExpectedRevision: exp.revision}
	}
	return &api.AppendResp{Result: &api.AppendResp_WrongExpectedVersion_{WrongExpectedVersion: w}}
}

// filter is a compiled server-side filter of $all.
type filter struct {
	onType   bool // match the event type rather than the stream name
	prefixes []string
	re       *regexp.Regexp
	// checkpointEvery is how many scanned events separate two checkpoints
	// of a filtered subscription (window × multiplier).
	checkpointEvery int
}

func compileFilter(o *api.ReadReq_Options) (*filter, error) {
	fo := o.GetFilter()
	if fo == nil {
		return nil, nil
	}
	f := &filter{}
	var expr *api.ReadReq_Options_FilterOptions_Expression
	switch v := fo.GetFilter().(type) {
	case *api.ReadReq_Options_FilterOptions_StreamIdentifier:
		expr = v.StreamIdentifier
	case *api.ReadReq_Options_FilterOptions_EventType:
		expr, f.onType = v.EventType, true
	default:
		return nil, status.Error(codes.InvalidArgument, "read: filter without an expression")
	}
	f.prefixes = expr.GetPrefix()
	if r := expr.GetRegex(); r != "" {
		re, err := regexp.Compile(r)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "read: filter regex: %v", err)
		}
		f.re = re
	}
	if len(f.prefixes) == 0 && f.re == nil {
		return nil, status.Error(codes.InvalidArgument, "read: filter needs prefixes or a regex")
	}
	window := 32
	if m, ok := fo.GetWindow().(*api.ReadReq_Options_FilterOptions_Max); ok && m.Max > 0 {
		window = int(m.Max)
	}
	mult := int(fo.GetCheckpointIntervalMultiplier())
	if mult < 1 {
		mult = 1
	}
	f.checkpointEvery = window * mult
	return f, nil
}

func (f *filter) match(r *record) bool {
	if f == nil {
		return true
	}
	subject := r.stream
	if f.onType {
		subject = r.typ
	}
	if f.re != nil {
		return f.re.MatchString(subject)
	}
	for _, p := range f.prefixes {
		if strings.HasPrefix(subject, p) {
			return true
		}
	}
	return false
}

// Read serves reads of one stream or of $all, with a count or as a
// subscription.
func (s *streamsService) Read(req *api.ReadReq, srv api.Streams_ReadServer) error {
	o := req.GetOptions()
	if o == nil {
		return status.Error(codes.InvalidArgument, "read: no options")
	}
	structured := true
	if _, ok := o.GetUuidOption().GetContent().(*api.ReadReq_Options_UUIDOption_String_); ok {
		structured = false
	}
	f, err := compileFilter(o)
	if err != nil {
		return err
	}
	backwards := o.GetReadDirection() == api.ReadReq_Options_Backwards
	_, subscribe := o.GetCountOption().(*api.ReadReq_Options_Subscription)
	count := o.GetCount()
	send := func(r *record) error { return srv.Send(eventResp(r, structured)) }

	switch so := o.GetStreamOption().(type) {
	case *api.ReadReq_Options_Stream:
		name := string(so.Stream.GetStreamIdentifier().GetStreamName())
		if subscribe {
			return status.Error(codes.Unimplemented, "esdbtestserver: stream subscriptions are not implemented")
		}
		return s.readStream(name, so.Stream, backwards, count, srv, send)
	case *api.ReadReq_Options_All:
		if subscribe {
			if backwards {
				return status.Error(codes.InvalidArgument, "read: subscriptions go forwards")
			}
			return s.subscribeAll(so.All, f, srv, send)
		}
		return s.readAll(so.All, f, backwards, count, send)
	default:
		return status.Error(codes.InvalidArgument, "read: neither a stream nor $all")
	}
}

func (s *streamsService) readStream(name string, so *api.ReadReq_Options_StreamOptions, backwards bool, count uint64, srv api.Streams_ReadServer, send func(*record) error) error {
	recs := s.log.snapshotStream(name)
	if len(recs) == 0 {
		return srv.Send(&api.ReadResp{Content: &api.ReadResp_StreamNotFound_{StreamNotFound: &api.ReadResp_StreamNotFound{
			StreamIdentifier: &shared.StreamIdentifier{StreamName: []byte(name)},
		}}})
	}
	last := uint64(len(recs) - 1)
	// Truncate-before ($tb in the stream's metadata, the latest event of
	// "$$" + name): reads skip the revisions below it, as EventStoreDB's
	// do before a scavenge removes them; $all keeps them.
	tb := s.log.truncateBefore(name)
	var from uint64
	switch v := so.GetRevisionOption().(type) {
	case *api.ReadReq_Options_StreamOptions_Revision:
		from = v.Revision
	case *api.ReadReq_Options_StreamOptions_End:
		from = last
		if !backwards {
			return nil // nothing after the end
		}
	default: // start
		from = 0
		if backwards {
			return nil
		}
	}
	var sent uint64
	if backwards {
		if from > last {
			from = last
		}
		for i := int64(from); i >= 0 && uint64(i) >= tb && sent < count; i-- {
			if err := send(recs[i]); err != nil {
				return err
			}
			sent++
		}
		return nil
	}
	for i := max(from, tb); i <= last && sent < count; i++ {
		if err := send(recs[i]); err != nil {
			return err
		}
		sent++
	}
	return nil
}

// readAll reads $all forwards from a position (inclusive) or backwards
// from a position (exclusive), as EventStoreDB does.
func (s *streamsService) readAll(ao *api.ReadReq_Options_AllOptions, f *filter, backwards bool, count uint64, send func(*record) error) error {
	all, _ := s.log.snapshotAll()
	var sent uint64
	if backwards {
		i := len(all) - 1
		if p, ok := ao.GetAllOption().(*api.ReadReq_Options_AllOptions_Position); ok {
			i = firstAtOrAfter(all, p.Position.GetCommitPosition(), p.Position.GetPreparePosition()) - 1
		} else if _, ok := ao.GetAllOption().(*api.ReadReq_Options_AllOptions_Start); ok {
			return nil
		}
		for ; i >= 0 && sent < count; i-- {
			if f.match(all[i]) {
				if err := send(all[i]); err != nil {
					return err
				}
				sent++
			}
		}
		return nil
	}
	i := 0
	switch v := ao.GetAllOption().(type) {
	case *api.ReadReq_Options_AllOptions_Position:
		i = firstAtOrAfter(all, v.Position.GetCommitPosition(), v.Position.GetPreparePosition())
	case *api.ReadReq_Options_AllOptions_End:
		return nil
	}
	for ; i < len(all) && sent < count; i++ {
		if f.match(all[i]) {
			if err := send(all[i]); err != nil {
				return err
			}
			sent++
		}
	}
	return nil
}

// subscribeAll confirms, catches up from the position (exclusive), says it
// caught up, then sends new events as they are written, until the client
// goes away or the server stops.
func (s *streamsService) subscribeAll(ao *api.ReadReq_Options_AllOptions, f *filter, srv api.Streams_ReadServer, send func(*record) error) error {
	if err := srv.Send(&api.ReadResp{Content: &api.ReadResp_Confirmation{Confirmation: &api.ReadResp_SubscriptionConfirmation{
		SubscriptionId: uuid.NewString(),
	}}}); err != nil {
		return err
	}
	all, changed := s.log.snapshotAll()
	next := 0
	switch v := ao.GetAllOption().(type) {
	case *api.ReadReq_Options_AllOptions_Position:
		next = firstAfter(all, v.Position.GetCommitPosition(), v.Position.GetPreparePosition())
	case *api.ReadReq_Options_AllOptions_End:
		next = len(all)
	}
	caughtUp := false
	scanned := 0
	for {
		for ; next < len(all); next++ {
			r := all[next]
			if f.match(r) {
				if err := send(r); err != nil {
					return err
				}
			}
			scanned++
			if f != nil && scanned%f.checkpointEvery == 0 {
				if err := srv.Send(&api.ReadResp{Content: &api.ReadResp_Checkpoint_{Checkpoint: &api.ReadResp_Checkpoint{
					CommitPosition: r.commit, PreparePosition: r.prepare,
				}}}); err != nil {
					return err
				}
			}
		}
		if !caughtUp {
			caughtUp = true
			if err := srv.Send(&api.ReadResp{Content: &api.ReadResp_CaughtUp_{CaughtUp: &api.ReadResp_CaughtUp{}}}); err != nil {
				return err
			}
		}
		select {
		case <-changed:
			all, changed = s.log.snapshotAll()
		case <-srv.Context().Done():
			return status.FromContextError(srv.Context().Err()).Err()
		}
	}
}

func eventResp(r *record, structured bool) *api.ReadResp {
	id := &shared.UUID{}
	if structured {
		most, least := uuidBits(r.id)
		id.Value = &shared.UUID_Structured_{Structured: &shared.UUID_Structured{MostSignificantBits: most, LeastSignificantBits: least}}
	} else {
		id.Value = &shared.UUID_String_{String_: r.id.String()}
	}
	return &api.ReadResp{Content: &api.ReadResp_Event{Event: &api.ReadResp_ReadEvent{
		Event: &api.ReadResp_ReadEvent_RecordedEvent{
			Id:               id,
			StreamIdentifier: &shared.StreamIdentifier{StreamName: []byte(r.stream)},
			StreamRevision:   r.revision,
			PreparePosition:  r.prepare,
			CommitPosition:   r.commit,
			Metadata: map[string]string{
				"type":         r.typ,
				"content-type": r.contentType,
				"created":      strconv.FormatInt(r.created, 10),
			},
			CustomMetadata: r.meta,
			Data:           r.data,
		},
		Position: &api.ReadResp_ReadEvent_CommitPosition{CommitPosition: r.commit},
	}}}
}
