package esdbtestserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/gossip"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/serverfeatures"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	api "github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// ErrRunning: Start was called on a server that is already listening.
var ErrRunning = errors.New("esdbtestserver: already running")

// Server is the in-process test double. The zero value is not usable; call
// New.
type Server struct {
	addr string
	log  *eventLog

	mu      sync.Mutex
	maxSize int
	srv     *grpc.Server
	serving chan struct{} // closed when Serve returned
	// nodeID names this node in gossip answers.
	nodeID uuid.UUID
}

// New returns a stopped server bound to a free port on 127.0.0.1: URL is
// already valid, but nothing listens until Start. This is how a test models
// "the server is down when the client starts".
func New() (*Server, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("esdbtestserver: reserve a port: %w", err)
	}
	addr := lis.Addr().String()
	if err := lis.Close(); err != nil {
		return nil, fmt.Errorf("esdbtestserver: reserve a port: %w", err)
	}
	return &Server{addr: addr, log: newEventLog(), nodeID: uuid.New(), maxSize: DefaultMaxAppendSize}, nil
}

// DefaultMaxAppendSize is EventStoreDB's default limit on the size of one
// append (its MaxAppendSize setting): 1 MiB.
const DefaultMaxAppendSize = 1 << 20

// SetMaxAppendSize changes the limit on the bytes (event bodies) of one
// append, as EventStoreDB's --max-append-size does. It applies from the
// next Start.
func (s *Server) SetMaxAppendSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxSize = n
}

// Run starts a server for the test and stops it when the test ends.
func Run(t testing.TB) *Server {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Addr is the host:port the server listens on when running.
func (s *Server) Addr() string { return s.addr }

// URL is an EventStoreDB connection string for this server (single node,
// no TLS). extra is appended to the query, e.g. "maxDiscoverAttempts=2".
func (s *Server) URL(extra ...string) string {
	u := "esdb://" + s.addr + "?tls=false"
	for _, e := range extra {
		u += "&" + e
	}
	return u
}

// Start listens on the server's address and serves until Stop. The events
// stored before a Stop are still there.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return ErrRunning
	}
	lis, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("esdbtestserver: listen on %s: %w", s.addr, err)
	}
	srv := grpc.NewServer(
		// The client pings every 10 s even without calls; a real server
		// tolerates that, so must the double.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}),
	)
	api.RegisterStreamsServer(srv, &streamsService{log: s.log, maxSize: s.maxSize})
	serverfeatures.RegisterServerFeaturesServer(srv, featuresService{})
	gossip.RegisterGossipServer(srv, &gossipService{s: s})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis) // returns when Stop closes the listener
	}()
	s.srv, s.serving = srv, done
	return nil
}

// Stop closes every connection, ends every call and subscription with an
// "unavailable" error on the client side, and stops listening. Stopping a
// stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, done := s.srv, s.serving
	s.srv, s.serving = nil, nil
	s.mu.Unlock()
	if srv == nil {
		return
	}
	srv.Stop()
	<-done
}

// Restart is Stop then Start: every client loses its connection and its
// subscriptions, and finds the same events when it comes back.
func (s *Server) Restart() error {
	s.Stop()
	return s.Start()
}

// Len reports how many events the server holds, in every stream.
func (s *Server) Len() int {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return len(s.log.all)
}

// AppendRaw stores an event as another program would, bypassing the
// protocol: tests use it to put foreign or system events ("$..." streams)
// into $all. It returns the event's revision in its stream.
func (s *Server) AppendRaw(stream, eventType string, data, metadata []byte) uint64 {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return s.log.writeLocked(stream, []proposed{{id: uuid.New(), typ: eventType, contentType: "application/json", data: data, meta: metadata}})
}

type featuresService struct {
	serverfeatures.UnimplementedServerFeaturesServer
}

// GetSupportedMethods answers the client's connect-time question. Only what
// the double implements is listed (no batch append, no persistent
// subscriptions).
func (featuresService) GetSupportedMethods(context.Context, *shared.Empty) (*serverfeatures.SupportedMethods, error) {
	const svc = "event_store.client.streams.streams"
	return &serverfeatures.SupportedMethods{
		EventStoreServerVersion: "23.10.0",
		Methods: []*serverfeatures.SupportedMethod{
			{ServiceName: svc, MethodName: "read"},
			{ServiceName: svc, MethodName: "append"},
		},
	}, nil
}

type gossipService struct {
	gossip.UnimplementedGossipServer
	s *Server
}

// Read describes a one-node cluster whose leader is this server, so that
// gossip-seed connection strings work too.
func (g *gossipService) Read(context.Context, *shared.Empty) (*gossip.ClusterInfo, error) {
	host, portStr, err := net.SplitHostPort(g.s.addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 32)
	if err != nil {
		return nil, err
	}
	most, least := uuidBits(g.s.nodeID)
	return &gossip.ClusterInfo{Members: []*gossip.MemberInfo{{
		InstanceId:   &shared.UUID{Value: &shared.UUID_Structured_{Structured: &shared.UUID_Structured{MostSignificantBits: most, LeastSignificantBits: least}}},
		TimeStamp:    time.Now().UnixNano() / 100,
		State:        gossip.MemberInfo_Leader,
		IsAlive:      true,
		HttpEndPoint: &gossip.EndPoint{Address: host, Port: uint32(port)},
	}}}, nil
}
