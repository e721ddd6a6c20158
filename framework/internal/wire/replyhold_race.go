//go:build race

package wire

const holdReplies = true
