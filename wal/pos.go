package wal

import "fmt"

// Pos is the address of a record: segment number and byte offset of its header in that segment.
type Pos struct {
	Seg uint32
	Off uint32
}

// Uint64 packs p as Seg<<32 | Off. The packing preserves order, so it serves as an index key.
func (p Pos) Uint64() uint64 { return uint64(p.Seg)<<32 | uint64(p.Off) }

// PosFromUint64 is the inverse of Pos.Uint64.
func PosFromUint64(u uint64) Pos { return Pos{Seg: uint32(u >> 32), Off: uint32(u)} }

// Less reports whether p comes before q in the log.
func (p Pos) Less(q Pos) bool { return p.Uint64() < q.Uint64() }

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Seg, p.Off) }
