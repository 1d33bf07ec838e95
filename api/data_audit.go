package api

import (
	"strconv"

	"github.com/j17-go/j17/engine/audit"
	"github.com/valyala/fasthttp"
)

// registerAuditRoutes registers the audit routes: on the data plane under /:type/:id/audit/...
// with an API key, and the operator ones (ops_audit.go) under the ops and internal prefixes.
func (s *Server) registerAuditRoutes() {
	s.HandleData(fasthttp.MethodGet, "/:type/:id/audit/verify-chain", s.auditHandler("type", "id", s.verifyChain))
	s.HandleData(fasthttp.MethodGet, "/:type/:id/audit/merkle-root", s.auditHandler("type", "id", s.merkleRoot))
	s.HandleData(fasthttp.MethodGet, "/:type/:id/audit/merkle-proof/:index", s.auditHandler("type", "id", s.merkleProof))
	s.HandleData(fasthttp.MethodPost, "/:type/:id/audit/merkle-verify", s.auditHandler("type", "id", s.merkleVerify))
	s.registerOpsAuditRoutes()
}

// auditStream is the aggregate an audit request is about.
type auditStream struct{ typ, id string }

// auditHandler binds the aggregate named by the route parameters typ and id.
func (s *Server) auditHandler(typ, id string, h func(*Request, auditStream) error) Handler {
	return func(r *Request) error {
		return h(r, auditStream{typ: r.Param(typ), id: r.Param(id)})
	}
}

func (s *Server) verifyChain(r *Request, a auditStream) error {
	rep, err := s.engine.VerifyChain(target(r), a.typ, a.id)
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, struct {
		OK bool `json:"ok"`
		audit.ChainReport
	}{true, rep})
	return nil
}

func (s *Server) merkleRoot(r *Request, a auditStream) error {
	rep, err := s.engine.MerkleRoot(target(r), a.typ, a.id)
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, struct {
		OK bool `json:"ok"`
		audit.RootReport
	}{true, rep})
	return nil
}

func (s *Server) merkleProof(r *Request, a auditStream) error {
	index, err := strconv.Atoi(r.Param("index"))
	if err != nil || index < 0 {
		return fieldProblem(ErrBadRequest, "index", "Event index %q must be a non-negative integer (0-based)", r.Param("index"))
	}
	pr, err := s.engine.MerkleProof(target(r), a.typ, a.id, index)
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, struct {
		OK bool `json:"ok"`
		audit.Proof
	}{true, pr})
	return nil
}

// proofBody is the body of merkle-verify: the object merkle-proof answered. On the ops route,
// aggregate_type and aggregate_id also name the stream whose root the proof must reach.
type proofBody struct {
	Index         *int     `json:"index"`
	Leaf          *string  `json:"leaf"`
	Path          []string `json:"path"`
	Root          *string  `json:"root"`
	TreeSize      *int     `json:"tree_size"`
	AggregateType string   `json:"aggregate_type"`
	AggregateID   string   `json:"aggregate_id"`
}

func (b *proofBody) proof() (audit.Proof, error) {
	if err := require(b.Leaf, "leaf"); err != nil {
		return audit.Proof{}, err
	}
	if err := require(b.Root, "root"); err != nil {
		return audit.Proof{}, err
	}
	if b.Index == nil {
		return audit.Proof{}, fieldProblem(ErrBadRequest, "index", "Field \"index\" is required")
	}
	if b.TreeSize == nil {
		return audit.Proof{}, fieldProblem(ErrBadRequest, "tree_size", "Field \"tree_size\" is required")
	}
	if b.Path == nil {
		return audit.Proof{}, fieldProblem(ErrBadRequest, "path", "Field \"path\" is required (an array, empty for a tree of one leaf)")
	}
	return audit.Proof{Index: *b.Index, Leaf: *b.Leaf, Path: b.Path, Root: *b.Root, TreeSize: *b.TreeSize}, nil
}

func (s *Server) merkleVerify(r *Request, a auditStream) error {
	var body proofBody
	if err := decodeBody(r.Ctx, &body); err != nil {
		return err
	}
	pr, err := body.proof()
	if err != nil {
		return err
	}
	// The ops route names no stream; its body may.
	if a.typ == "" {
		a = auditStream{typ: body.AggregateType, id: body.AggregateID}
		if (a.typ == "") != (a.id == "") {
			return fieldProblem(ErrBadRequest, "aggregate_id", "Fields \"aggregate_type\" and \"aggregate_id\" go together")
		}
	}
	v, err := s.engine.MerkleVerify(target(r), a.typ, a.id, pr)
	if err != nil {
		return dataError(err)
	}
	writeJSON(r.Ctx, fasthttp.StatusOK, struct {
		OK bool `json:"ok"`
		audit.Verdict
	}{true, v})
	return nil
}
