module github.com/leafid/leaf/bench

go 1.26.8

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/leafid/leaf v0.0.0
	github.com/sony/sonyflake v1.2.0
)

replace github.com/leafid/leaf => ../
