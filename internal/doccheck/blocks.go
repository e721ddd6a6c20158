package doccheck

import (
	"bufio"
	"bytes"
	"strings"
)

// Block is one ```go block of a Markdown file.
type Block struct {
	File    string // as given to GoBlocks
	Line    int    // the line of the block's first line of code, from 1
	Heading string // the nearest heading above the block, without its #s
	Source  string
}

// GoBlocks returns the ```go blocks of a Markdown text. Only a fence of exactly
// ```go opens one; any other fence is skipped to its end, so a ```go line inside a
// ```text block is not taken for code.
func GoBlocks(file string, text []byte) []Block {
	var (
		blocks  []Block
		heading string
		fence   string // the open fence's info string, "" outside a fence
		inFence bool
		cur     *Block
		src     strings.Builder
	)
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case !inFence && strings.HasPrefix(trimmed, "```"):
			inFence, fence = true, strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			if fence == "go" {
				cur = &Block{File: file, Line: n + 1, Heading: heading}
				src.Reset()
			}
		case inFence && trimmed == "```":
			inFence = false
			if cur != nil {
				cur.Source = src.String()
				blocks = append(blocks, *cur)
				cur = nil
			}
		case inFence:
			if cur != nil {
				src.WriteString(line)
				src.WriteByte('\n')
			}
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	return blocks
}
