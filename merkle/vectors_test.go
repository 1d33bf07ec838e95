package merkle

import (
	"bufio"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestVectors checks roots, proofs and chains against testdata/vectors.txt, computed by an
// independent implementation.
func TestVectors(t *testing.T) {
	f, err := os.Open("testdata/vectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	cases := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cases++
		fields := strings.Fields(line)
		n, _ := strconv.Atoi(fields[1])
		leaves := leavesN(n)
		switch fields[0] {
		case "root":
			if got := Root(leaves); hex.EncodeToString(got[:]) != fields[2] {
				t.Errorf("%s: got %x", line, got)
			}
		case "proof":
			i, _ := strconv.Atoi(fields[2])
			p, err := Proof(leaves, i)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range p {
				got = append(got, hex.EncodeToString(h[:]))
			}
			want := ""
			if len(fields) > 3 {
				want = fields[3]
			}
			if strings.Join(got, ",") != want {
				t.Errorf("%s: got %s", line, strings.Join(got, ","))
			}
		case "chain":
			if got := Chain(leaves)[n-1]; hex.EncodeToString(got[:]) != fields[2] {
				t.Errorf("%s: got %x", line, got)
			}
		default:
			t.Fatalf("unknown directive in %q", line)
		}
	}
	if cases == 0 {
		t.Fatal("no vectors")
	}
}
