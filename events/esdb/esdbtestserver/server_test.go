package esdbtestserver_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/serverfeatures"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	api "github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/cronactor/cronactor/events/esdb/esdbtestserver"
)

// These tests speak the wire protocol directly, to pin down the behaviour
// of the double that the adapter relies on, independently of the client
// library.

func dial(t *testing.T, srv *esdbtestserver.Server) api.StreamsClient {
	t.Helper()
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return api.NewStreamsClient(conn)
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func pbID(id uuid.UUID) *shared.UUID {
	return &shared.UUID{Value: &shared.UUID_String_{String_: id.String()}}
}

type ev struct {
	id   uuid.UUID
	meta map[string]string
}

func okEvent() ev {
	return ev{id: uuid.New(), meta: map[string]string{"type": "T", "content-type": "application/json"}}
}

func appendRaw(t *testing.T, c api.StreamsClient, stream string, exp *api.AppendReq_Options, evs ...ev) (*api.AppendResp, error) {
	t.Helper()
	s, err := c.Append(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	exp.StreamIdentifier = &shared.StreamIdentifier{StreamName: []byte(stream)}
	if err := s.Send(&api.AppendReq{Content: &api.AppendReq_Options_{Options: exp}}); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := s.Send(&api.AppendReq{Content: &api.AppendReq_ProposedMessage_{ProposedMessage: &api.AppendReq_ProposedMessage{
			Id: pbID(e.id), Metadata: e.meta, Data: []byte(`{}`),
		}}}); err != nil {
			t.Fatal(err)
		}
	}
	return s.CloseAndRecv()
}

func noStream() *api.AppendReq_Options {
	return &api.AppendReq_Options{ExpectedStreamRevision: &api.AppendReq_Options_NoStream{NoStream: &shared.Empty{}}}
}

func revision(r uint64) *api.AppendReq_Options {
	return &api.AppendReq_Options{ExpectedStreamRevision: &api.AppendReq_Options_Revision{Revision: r}}
}

func readAllMsgs(t *testing.T, rc api.Streams_ReadClient) []*api.ReadResp {
	t.Helper()
	var out []*api.ReadResp
	for {
		m, err := rc.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
}

func readStreamReq(stream string, from uint64, count uint64) *api.ReadReq {
	return &api.ReadReq{Options: &api.ReadReq_Options{
		StreamOption: &api.ReadReq_Options_Stream{Stream: &api.ReadReq_Options_StreamOptions{
			StreamIdentifier: &shared.StreamIdentifier{StreamName: []byte(stream)},
			RevisionOption:   &api.ReadReq_Options_StreamOptions_Revision{Revision: from},
		}},
		CountOption:  &api.ReadReq_Options_Count{Count: count},
		FilterOption: &api.ReadReq_Options_NoFilter{NoFilter: &shared.Empty{}},
		UuidOption:   &api.ReadReq_Options_UUIDOption{Content: &api.ReadReq_Options_UUIDOption_Structured{Structured: &shared.Empty{}}},
	}}
}

func TestAppendRules(t *testing.T) {
	srv := esdbtestserver.Run(t)
	c := dial(t, srv)
	a, b := okEvent(), okEvent()
	resp, err := appendRaw(t, c, "s-1", noStream(), a, b)
	if err != nil || resp.GetSuccess() == nil || resp.GetSuccess().GetCurrentRevision() != 1 || resp.GetSuccess().GetPosition() == nil {
		t.Fatalf("first append: %v, %v", resp, err)
	}
	// Wrong expected revisions are refused with the stream's revision.
	for _, exp := range []*api.AppendReq_Options{noStream(), revision(0), revision(7)} {
		resp, err := appendRaw(t, c, "s-1", exp, okEvent())
		if err != nil || resp.GetWrongExpectedVersion() == nil || resp.GetWrongExpectedVersion().GetCurrentRevision() != 1 {
			t.Errorf("expected %v: %v, %v; want wrong expected version at 1", exp, resp, err)
		}
	}
	if resp, _ := appendRaw(t, c, "s-none", revision(0), okEvent()); resp.GetWrongExpectedVersion().GetCurrentNoStream() == nil {
		t.Errorf("revision 0 on a missing stream: %v", resp)
	}
	// The same events at the same place again: a retry, nothing written,
	// no position.
	resp, err = appendRaw(t, c, "s-1", noStream(), a, b)
	if err != nil || resp.GetSuccess() == nil || resp.GetSuccess().GetCurrentRevision() != 1 || resp.GetSuccess().GetNoPosition() == nil {
		t.Fatalf("retry: %v, %v", resp, err)
	}
	if srv.Len() != 2 {
		t.Fatalf("after a retry the server holds %d events", srv.Len())
	}
	// Only part of it: refused.
	if resp, _ := appendRaw(t, c, "s-1", noStream(), a, okEvent()); resp.GetWrongExpectedVersion() == nil {
		t.Errorf("partial retry accepted: %v", resp)
	}
	// Events must carry a type and a content type.
	for _, meta := range []map[string]string{{"content-type": "application/json"}, {"type": "T"}} {
		_, err := appendRaw(t, c, "s-2", noStream(), ev{id: uuid.New(), meta: meta})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("metadata %v: %v, want InvalidArgument", meta, err)
		}
	}
}

func TestReadStream(t *testing.T) {
	srv := esdbtestserver.Run(t)
	c := dial(t, srv)
	ctx := ctxFor(t)

	rc, err := c.Read(ctx, readStreamReq("missing", 0, 10))
	if err != nil {
		t.Fatal(err)
	}
	msgs := readAllMsgs(t, rc)
	if len(msgs) != 1 || msgs[0].GetStreamNotFound() == nil {
		t.Fatalf("missing stream: %v", msgs)
	}

	if _, err := appendRaw(t, c, "s", noStream(), okEvent(), okEvent(), okEvent()); err != nil {
		t.Fatal(err)
	}
	rc, err = c.Read(ctx, readStreamReq("s", 1, 10))
	if err != nil {
		t.Fatal(err)
	}
	msgs = readAllMsgs(t, rc)
	if len(msgs) != 2 {
		t.Fatalf("read from 1: %d messages, want 2 events and nothing else", len(msgs))
	}
	for i, m := range msgs {
		e := m.GetEvent().GetEvent()
		if e == nil {
			t.Fatalf("message %d is not an event: %v", i, m)
		}
		if e.GetStreamRevision() != uint64(i+1) {
			t.Errorf("message %d: revision %d", i, e.GetStreamRevision())
		}
		md := e.GetMetadata()
		if md["type"] != "T" || md["content-type"] != "application/json" {
			t.Errorf("message %d: metadata %v", i, md)
		}
		if _, err := strconv.ParseInt(md["created"], 10, 64); err != nil {
			t.Errorf("message %d: created %q: %v", i, md["created"], err)
		}
		if e.GetId().GetStructured() == nil {
			t.Errorf("message %d: id not structured as asked", i)
		}
	}
	rc, err = c.Read(ctx, readStreamReq("s", 9, 10))
	if err != nil {
		t.Fatal(err)
	}
	if msgs := readAllMsgs(t, rc); len(msgs) != 0 {
		t.Fatalf("reading past the end: %v", msgs)
	}
}

func TestSubscriptionStartsWithConfirmation(t *testing.T) {
	srv := esdbtestserver.Run(t)
	c := dial(t, srv)
	if _, err := appendRaw(t, c, "s", noStream(), okEvent()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	rc, err := c.Read(ctx, &api.ReadReq{Options: &api.ReadReq_Options{
		StreamOption: &api.ReadReq_Options_All{All: &api.ReadReq_Options_AllOptions{AllOption: &api.ReadReq_Options_AllOptions_Start{Start: &shared.Empty{}}}},
		CountOption:  &api.ReadReq_Options_Subscription{Subscription: &api.ReadReq_Options_SubscriptionOptions{}},
		FilterOption: &api.ReadReq_Options_NoFilter{NoFilter: &shared.Empty{}},
		UuidOption:   &api.ReadReq_Options_UUIDOption{Content: &api.ReadReq_Options_UUIDOption_Structured{Structured: &shared.Empty{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := rc.Recv()
	if err != nil || first.GetConfirmation() == nil {
		t.Fatalf("first message: %v, %v; want a confirmation", first, err)
	}
	second, err := rc.Recv()
	if err != nil || second.GetEvent() == nil {
		t.Fatalf("second message: %v, %v; want the event", second, err)
	}
	// Live: a new event arrives after the caught-up notice.
	if _, err := appendRaw(t, c, "s", revision(0), okEvent()); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := rc.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.GetCaughtUp() != nil {
			continue
		}
		if m.GetEvent().GetEvent().GetStreamRevision() != 1 {
			t.Fatalf("live message: %v", m)
		}
		break
	}
	srv.Stop()
	if _, err := rc.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("after Stop: %v, want Unavailable", err)
	}
}

func TestServerFeatures(t *testing.T) {
	srv := esdbtestserver.Run(t)
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	m, err := serverfeatures.NewServerFeaturesClient(conn).GetSupportedMethods(ctxFor(t), &shared.Empty{})
	if err != nil || m.GetEventStoreServerVersion() == "" {
		t.Fatalf("features: %v, %v", m, err)
	}
}
