package tick

import (
	"encoding/json"
	"fmt"
	"sort"
)

// FromGo converts the values encoding/json produces (map[string]any, []any,
// string, float64, json.Number, bool, nil) and Go integers into a Value.
// Map keys are sorted, since Go maps have no order.
func FromGo(x any) (Value, error) {
	return fromGo(x, 0)
}

func fromGo(x any, depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, fmt.Errorf("%w: nesting deeper than %d", ErrJSON, MaxDepth)
	}
	switch t := x.(type) {
	case nil:
		return Null(), nil
	case Value:
		return t, nil
	case bool:
		return Bool(t), nil
	case string:
		return String(t), nil
	case float64:
		return Number(t), nil
	case float32:
		return Number(float64(t)), nil
	case int:
		return Number(float64(t)), nil
	case int32:
		return Number(float64(t)), nil
	case int64:
		return Number(float64(t)), nil
	case uint64:
		return Number(float64(t)), nil
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return Value{}, fmt.Errorf("%w: number %q: %w", ErrJSON, t, err)
		}
		return Number(f), nil
	case []any:
		items := make([]Value, len(t))
		for i, it := range t {
			v, err := fromGo(it, depth+1)
			if err != nil {
				return Value{}, err
			}
			items[i] = v
		}
		return Value{kind: KindArray, n: &node{items: items}}, nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		members := make([]Member, len(keys))
		for i, k := range keys {
			v, err := fromGo(t[k], depth+1)
			if err != nil {
				return Value{}, err
			}
			members[i] = Member{Key: k, Value: v}
		}
		return Value{kind: KindObject, n: &node{members: members}}, nil
	}
	return Value{}, fmt.Errorf("%w: cannot convert %T to JSON", ErrType, x)
}

// ToGo converts v to the values encoding/json produces: map[string]any,
// []any, string, float64, bool and nil (also for a missing Value).
func (v Value) ToGo() any {
	switch v.kind {
	case KindBool:
		return v.num != 0
	case KindNumber:
		return v.num
	case KindString:
		return v.str
	case KindArray:
		out := make([]any, len(v.n.m().items))
		for i, it := range v.n.m().items {
			out[i] = it.ToGo()
		}
		return out
	case KindObject:
		out := make(map[string]any, len(v.n.m().members))
		for _, m := range v.n.m().members {
			out[m.Key] = m.Value.ToGo()
		}
		return out
	}
	return nil
}
