using System;
using System.Buffers;
using System.Text;
using Falconet.Http.Parsing.Tests.Support;

namespace Falconet.Http.Parsing.Tests;

/// <summary>Request-line behaviour that the transcript suite does not show: consumption, limits and the copy path.</summary>
public sealed class RequestLineTests
{
    [Fact]
    public void TryParseRequestLine_consumes_nothing_when_the_line_is_incomplete()
    {
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("GET /index.html HTTP/1.1\r"u8.ToArray()));

        Assert.False(Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default));
        Assert.Equal(0, reader.Consumed);
        Assert.Empty(record.Log);
    }

    [Fact]
    public void TryParseRequestLine_consumes_exactly_the_line_and_its_CRLF()
    {
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("GET /a HTTP/1.1\r\nHost: x\r\n"u8.ToArray()));

        Assert.True(Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default));
        Assert.Equal(17, reader.Consumed);
        Assert.Equal(["GET (Get) /a Origin query=-1 Http11"], record.Log);
    }

    [Fact]
    public void TryParseRequestLine_accepts_a_line_of_exactly_the_limit()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 64 };
        string line = "GET /" + new string('a', 64 - 16) + " HTTP/1.1\r\n";
        Assert.Equal(64, line.Length);

        Assert.Contains("Origin", RequestDriver.RunWhole(Encoding.ASCII.GetBytes(line + "\r\n"), limits), StringComparison.Ordinal);
    }

    [Fact]
    public void TryParseRequestLine_answers_414_for_one_byte_over_the_limit()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 64 };
        string line = "GET /" + new string('a', 64 - 15) + " HTTP/1.1\r\n";

        Assert.EndsWith("rejected 414", RequestDriver.RunWhole(Encoding.ASCII.GetBytes(line + "\r\n"), limits), StringComparison.Ordinal);
    }

    [Fact]
    public void TryParseRequestLine_waits_below_the_limit_and_answers_414_at_it_while_the_line_is_incomplete()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 64 };
        var handler = new RecordingHandler(new RequestRecord());
        byte[] partial = Encoding.ASCII.GetBytes("GET /" + new string('a', 58));
        Assert.Equal(63, partial.Length);

        var waiting = new SequenceReader<byte>(Segments.Chain(Segments.SplitAt(partial, 10)));
        Assert.False(Http1Parser.TryParseRequestLine(ref handler, ref waiting, limits));

        byte[] full = [.. partial, (byte)'a'];
        var error = Assert.Throws<BadHttpRequestException>(() => Parse(Segments.Chain(Segments.SplitAt(full, 10)), limits));
        Assert.Equal(414, error.StatusCode);
    }

    [Fact]
    public void TryParseRequestLine_parses_a_long_line_that_crosses_blocks_through_a_pooled_copy()
    {
        string target = "/" + new string('p', 3000) + "?q=" + new string('v', 2000);
        byte[] request = Encoding.ASCII.GetBytes($"GET {target} HTTP/1.1\r\n");
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var reader = new SequenceReader<byte>(Segments.Chain(Segments.SplitAt(request, 1000, 2000, 4000)));

        Assert.True(Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default));
        Assert.Equal($"GET (Get) {target} Origin query=3001 Http11", record.Log[0]);
        Assert.True(reader.End);
    }

    [Fact]
    public void Request_line_errors_carry_a_message_and_no_request_bytes()
    {
        var error = Assert.Throws<BadHttpRequestException>(
            () => Parse(new ReadOnlySequence<byte>("GET / HTTP/2.0\r\n"u8.ToArray()), HttpLimits.Default));

        Assert.Equal(505, error.StatusCode);
        Assert.Equal("HTTP version not supported.", error.Message);
    }

    private static bool Parse(ReadOnlySequence<byte> input, HttpLimits limits)
    {
        var handler = new RecordingHandler(new RequestRecord());
        var reader = new SequenceReader<byte>(input);
        return Http1Parser.TryParseRequestLine(ref handler, ref reader, limits);
    }
}
