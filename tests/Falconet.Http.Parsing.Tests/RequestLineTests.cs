using System;
using System.Buffers;
using System.Linq;
using System.Text;
using Falconet.Http.Http1;
using Falconet.Http.Parsing.Tests.Support;
using Shouldly;

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

        Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default).ShouldBeFalse();
        reader.Consumed.ShouldBe(0);
        record.Log.ShouldBeEmpty();
    }

    [Fact]
    public void TryParseRequestLine_consumes_exactly_the_line_and_its_CRLF()
    {
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("GET /a HTTP/1.1\r\nHost: x\r\n"u8.ToArray()));

        Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default).ShouldBeTrue();
        reader.Consumed.ShouldBe(17);
        record.Log.ShouldBe(["GET (Get) /a Origin query=-1 Http11"]);
    }

    [Fact]
    public void TryParseRequestLine_accepts_a_line_of_exactly_the_limit()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 64 };
        string line = "GET /" + new string('a', 64 - 16) + " HTTP/1.1\r\n";
        line.Length.ShouldBe(64);

        RequestDriver.RunWhole(Encoding.ASCII.GetBytes(line + "\r\n"), limits).ShouldContain("Origin", Case.Sensitive);
    }

    [Fact]
    public void TryParseRequestLine_answers_414_for_one_byte_over_the_limit()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 64 };
        string line = "GET /" + new string('a', 64 - 15) + " HTTP/1.1\r\n";

        RequestDriver.RunWhole(Encoding.ASCII.GetBytes(line + "\r\n"), limits).ShouldEndWith("rejected 414 RequestLineTooLong", Case.Sensitive);
    }

    [Fact]
    public void TryParseRequestLine_waits_below_the_limit_and_answers_414_at_it_while_the_line_is_incomplete()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 64 };
        var handler = new RecordingHandler(new RequestRecord());
        byte[] partial = Encoding.ASCII.GetBytes("GET /" + new string('a', 58));
        partial.Length.ShouldBe(63);

        var waiting = new SequenceReader<byte>(Segments.Chain(Segments.SplitAt(partial, 10)));
        Http1Parser.TryParseRequestLine(ref handler, ref waiting, limits).ShouldBeFalse();

        byte[] full = [.. partial, (byte)'a'];
        var error = Should.Throw<BadHttpRequestException>(() => Parse(Segments.Chain(Segments.SplitAt(full, 10)), limits));
        error.Reason.ShouldBe(RequestRejectionReason.RequestLineTooLong);
        error.StatusCode.ShouldBe(414);
    }

    [Fact]
    public void TryParseRequestLine_parses_a_long_line_that_crosses_blocks_through_a_pooled_copy()
    {
        string target = "/" + new string('p', 3000) + "?q=" + new string('v', 2000);
        byte[] request = Encoding.ASCII.GetBytes($"GET {target} HTTP/1.1\r\n");
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var reader = new SequenceReader<byte>(Segments.Chain(Segments.SplitAt(request, 1000, 2000, 4000)));

        Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default).ShouldBeTrue();
        record.Log[0].ShouldBe($"GET (Get) {target} Origin query=3001 Http11");
        reader.End.ShouldBeTrue();
    }

    [Fact]
    public void Request_line_errors_carry_a_message_and_no_request_bytes()
    {
        var error = Should.Throw<BadHttpRequestException>(
            () => Parse(new ReadOnlySequence<byte>("GET / HTTP/2.0\r\n"u8.ToArray()), HttpLimits.Default));

        error.Reason.ShouldBe(RequestRejectionReason.UnsupportedVersion);
        error.StatusCode.ShouldBe(505);
        error.Message.ShouldBe("HTTP version not supported.");
    }

    public static TheoryData<string, byte[], RequestRejectionReason> ImpossibleStarts => new()
    {
        { "TLS ClientHello", [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03, 0x5A, 0x1E], RequestRejectionReason.InvalidMethod },
        { "TLS record header only", [0x16], RequestRejectionReason.InvalidMethod },
        { "NUL first", [0x00, 0x47, 0x45, 0x54], RequestRejectionReason.InvalidMethod },
        { "space first", " GET / HTTP/1.1"u8.ToArray(), RequestRejectionReason.InvalidMethod },
        { "non-token byte in the method", "G(T / HT"u8.ToArray(), RequestRejectionReason.InvalidMethod },
        { "HTAB after the method", "GET\t/"u8.ToArray(), RequestRejectionReason.InvalidMethod },
        { "CR after the method", "GET\r"u8.ToArray(), RequestRejectionReason.InvalidMethod },
        { "method longer than any implemented", "ABCDEFGHIJKLMNOPQRSTUVWXYZ-ABCDEF"u8.ToArray(), RequestRejectionReason.MethodTooLong },
        { "two spaces after the method", "GET  /"u8.ToArray(), RequestRejectionReason.ExtraSpaceBeforeTarget },
        { "control byte in the target", "GET /a\u0001"u8.ToArray(), RequestRejectionReason.InvalidTargetCharacter },
        { "non-ASCII byte in the target", [.. "GET /caf"u8, 0xE9], RequestRejectionReason.InvalidTargetCharacter },
        { "CR and more after the target", "GET /a\rX"u8.ToArray(), RequestRejectionReason.InvalidTargetCharacter },
        { "version not starting with HTTP/", "GET / HTTX"u8.ToArray(), RequestRejectionReason.InvalidVersion },
        { "lower-case version", "GET / http/1.1"u8.ToArray(), RequestRejectionReason.InvalidVersion },
        { "letter as the minor version", "GET / HTTP/1.x"u8.ToArray(), RequestRejectionReason.InvalidVersion },
        { "byte after the version", "GET / HTTP/1.1 "u8.ToArray(), RequestRejectionReason.InvalidVersion },
        { "bare CR after the version", "GET / HTTP/1.1\rX"u8.ToArray(), RequestRejectionReason.InvalidVersion },
        { "bare CR after empty lines", "\r\n\rG"u8.ToArray(), RequestRejectionReason.BareCarriageReturnBeforeRequestLine },
    };

    [Theory]
    [MemberData(nameof(ImpossibleStarts))]
    public void Incomplete_line_that_can_never_be_a_request_line_is_rejected_before_its_LF(string name, byte[] received, RequestRejectionReason reason)
    {
        var whole = Should.Throw<BadHttpRequestException>(() => Parse(new ReadOnlySequence<byte>(received), HttpLimits.Default));
        whole.Reason.ShouldBe(reason, name);

        // The same when the bytes sit in many segments, as when they arrived in pieces.
        var split = Should.Throw<BadHttpRequestException>(() => Parse(Segments.Chain(Segments.OneByteEach(received)), HttpLimits.Default));
        split.Reason.ShouldBe(reason);
    }

    [Fact]
    public void Every_incomplete_start_of_a_valid_request_line_waits_for_more()
    {
        foreach ((string request, _) in RequestSuite.Valid.Values)
        {
            byte[] bytes = RequestSuite.Bytes(request);
            int lineStart = 0;
            while (request.AsSpan(lineStart).StartsWith("\r\n", StringComparison.Ordinal))
            {
                lineStart += 2;
            }

            // Every prefix up to (not including) the request line's LF.
            int lineFeed = request.IndexOf('\n', lineStart);
            for (int length = 0; length <= lineFeed; length++)
            {
                var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(bytes, 0, length));
                var handler = new RecordingHandler(new RequestRecord());
                Http1Parser.TryParseRequestLine(ref handler, ref reader, RequestSuite.Limits).ShouldBeFalse($"{request[..length]}");
                reader.Consumed.ShouldBe(0);
            }
        }
    }

    [Fact]
    public void Empty_lines_before_the_request_line_are_consumed_with_it()
    {
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n"u8.ToArray()));

        Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default).ShouldBeTrue();
        reader.Consumed.ShouldBe(4 + 17);
        record.Log.ShouldBe(["GET (Get) /a Origin query=-1 Http11"]);
    }

    [Fact]
    public void Empty_lines_alone_consume_nothing_and_count_toward_the_request_line_limit()
    {
        var limits = new HttpLimits { MaxRequestLineSize = 64 };
        byte[] emptyLines = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("\r\n", 31)) + "\r");
        var handler = new RecordingHandler(new RequestRecord());
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(emptyLines));

        Http1Parser.TryParseRequestLine(ref handler, ref reader, limits).ShouldBeFalse();
        reader.Consumed.ShouldBe(0);

        byte[] oneMore = [.. emptyLines, (byte)'\n'];
        var error = Should.Throw<BadHttpRequestException>(() => Parse(new ReadOnlySequence<byte>(oneMore), limits));
        error.Reason.ShouldBe(RequestRejectionReason.TooManyEmptyLines);
    }

    [Theory]
    [InlineData("HTTP/1.2")]
    [InlineData("HTTP/1.9")]
    public void Higher_minor_version_of_HTTP_1_is_handed_on_as_HTTP_1_1(string version)
    {
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(Encoding.ASCII.GetBytes($"GET / {version}\r\n")));

        Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default).ShouldBeTrue();
        record.Version.ShouldBe(KnownVersion.Http11);
    }

    private static bool Parse(ReadOnlySequence<byte> input, HttpLimits limits)
    {
        var handler = new RecordingHandler(new RequestRecord());
        var reader = new SequenceReader<byte>(input);
        return Http1Parser.TryParseRequestLine(ref handler, ref reader, limits);
    }
}
