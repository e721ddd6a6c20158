//go:build !race

package framework

const holdReplies = false
