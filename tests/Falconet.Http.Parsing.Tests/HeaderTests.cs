using System;
using System.Buffers;
using System.Linq;
using System.Text;
using Falconet.Http.Http1;
using Falconet.Http.Parsing.Tests.Support;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>Header-section behaviour beyond the suite: incremental state, exact limits and handler refusal.</summary>
public sealed class HeaderTests
{
    [Fact]
    public void TryParseHeaders_consumes_complete_lines_and_keeps_count_and_size_in_the_state()
    {
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var state = default(HeaderParseState);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("Host: a\r\nAccept: */*\r\nX-Par"u8.ToArray()));

        Http1Parser.TryParseHeaders(ref handler, ref reader, HttpLimits.Default, ref state).ShouldBeFalse();

        reader.Consumed.ShouldBe(22);
        state.Count.ShouldBe(2);
        state.Bytes.ShouldBe(22);
        record.Log.ShouldBe(["[Host]=[a]", "[Accept]=[*/*]"]);
    }

    [Fact]
    public void TryParseHeaders_continues_from_the_state_when_more_data_arrives()
    {
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var state = new HeaderParseState { Count = 2, Bytes = 22 };
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("X-Part: 1\r\n\r\nGET"u8.ToArray()));

        Http1Parser.TryParseHeaders(ref handler, ref reader, HttpLimits.Default, ref state).ShouldBeTrue();

        reader.Consumed.ShouldBe(13);
        state.Count.ShouldBe(3);
        state.Bytes.ShouldBe(22 + 13);
        record.Log.ShouldBe(["[X-Part]=[1]", "end of headers"]);

        state.Reset();
        state.ShouldBe(default);
    }

    [Fact]
    public void TryParseHeaders_accepts_exactly_the_count_limit_and_answers_431_one_over()
    {
        var limits = new HttpLimits { MaxRequestHeaderCount = 3 };

        Outcome(Headers(3), limits).ShouldBeNull();
        Outcome(Headers(4), limits).ShouldBe(RequestRejectionReason.TooManyHeaders);
    }

    [Fact]
    public void TryParseHeaders_accepts_exactly_the_size_limit_and_answers_431_one_over()
    {
        byte[] section = Encoding.ASCII.GetBytes("Host: example\r\nX-A: 1\r\n\r\n");

        Outcome(section, new HttpLimits { MaxRequestHeadersSize = section.Length }).ShouldBeNull();
        Outcome(section, new HttpLimits { MaxRequestHeadersSize = section.Length - 1 }).ShouldBe(RequestRejectionReason.HeadersTooLarge);
    }

    [Fact]
    public void TryParseHeaders_answers_431_as_soon_as_an_unfinished_line_reaches_the_size_limit()
    {
        var limits = new HttpLimits { MaxRequestHeadersSize = 100 };
        var handler = new RecordingHandler(new RequestRecord());
        var state = default(HeaderParseState);
        byte[] unfinished = Encoding.ASCII.GetBytes("X-Long: " + new string('v', 92));

        var below = new SequenceReader<byte>(new ReadOnlySequence<byte>(unfinished.AsMemory(0, 99)));
        Http1Parser.TryParseHeaders(ref handler, ref below, limits, ref state).ShouldBeFalse();

        Outcome(unfinished, limits).ShouldBe(RequestRejectionReason.HeadersTooLarge);
    }

    [Fact]
    public void TryParseHeaders_rejects_a_value_the_handler_refuses()
    {
        var handler = new RefusingHandler();
        var state = default(HeaderParseState);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("Host: a\r\nX-Bad: b\r\n\r\n"u8.ToArray()));
        RequestRejectionReason? reason = null;
        try
        {
            Http1Parser.TryParseHeaders(ref handler, ref reader, HttpLimits.Default, ref state);
        }
        catch (BadHttpRequestException e)
        {
            reason = e.Reason;
        }

        reason.ShouldBe(RequestRejectionReason.InvalidHeaderValue);
        handler.Accepted.ShouldBe(1);
        reader.Consumed.ShouldBe(9);
    }

    [Fact]
    public void TryParseHeaders_parses_a_long_value_that_crosses_many_blocks()
    {
        string value = string.Concat(Enumerable.Range(0, 900).Select(i => (char)('a' + (i % 26))));
        byte[] section = Encoding.ASCII.GetBytes($"X-Long: {value}\r\n\r\n");
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var state = default(HeaderParseState);
        var reader = new SequenceReader<byte>(Segments.Chain(Segments.RandomPieces(section, new Random(7), 64)));

        Http1Parser.TryParseHeaders(ref handler, ref reader, HttpLimits.Default, ref state).ShouldBeTrue();
        record.Log.ShouldBe([$"[X-Long]=[{value}]", "end of headers"]);
    }

    private static byte[] Headers(int count) =>
        Encoding.ASCII.GetBytes(string.Concat(Enumerable.Range(0, count).Select(i => $"X-{i}: v\r\n")) + "\r\n");

    /// <summary>Parses a whole header section; null when accepted, else the reason it was refused for.</summary>
    private static RequestRejectionReason? Outcome(byte[] section, HttpLimits limits)
    {
        var handler = new RecordingHandler(new RequestRecord());
        var state = default(HeaderParseState);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(section));
        try
        {
            Http1Parser.TryParseHeaders(ref handler, ref reader, limits, ref state).ShouldBeTrue("The section is complete.");
            return null;
        }
        catch (BadHttpRequestException e)
        {
            return e.Reason;
        }
    }

    private struct RefusingHandler : IHttpHeadersHandler
    {
        public int Accepted;

        public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        {
            if (name.SequenceEqual("X-Bad"u8))
            {
                return false;
            }

            Accepted++;
            return true;
        }

        public readonly void OnHeadersComplete()
        {
        }
    }
}
