package implication

import (
	"strconv"

	"github.com/j17-go/j17/storage/canonical"
)

// appendMetadata writes an implied event's metadata in canonical key order: the trigger's
// actor, implied_by and the trigger's timestamp.
func appendMetadata(dst, actor []byte, by ImpliedBy, ts int64) []byte {
	dst = append(dst, `{"actor":`...)
	dst = append(dst, actor...)
	dst = AppendImpliedBy(append(dst, `,"implied_by":`...), by)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, ts, 10)
	return append(dst, '}')
}

// AppendImpliedBy writes by as canonical JSON.
func AppendImpliedBy(dst []byte, by ImpliedBy) []byte {
	dst = append(dst, `{"depth":`...)
	dst = strconv.AppendInt(dst, int64(by.Depth), 10)
	dst = append(dst, `,"event_type":`...)
	dst = canonical.AppendString(dst, by.EventType)
	dst = append(dst, `,"key":`...)
	dst = canonical.AppendString(dst, by.Key)
	return append(dst, '}')
}
