using System;
using System.Collections.Generic;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Http1;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// A kept-alive connection whose whole head (request line and header section) repeats the previous one byte for byte takes it
/// with one compare: every request must still see exactly the line and headers its own bytes say, whatever changed before it.
/// </summary>
public class RepeatedRequestHeadTests : ServerTests
{
    // Long enough that every head, alone in a read, is at least one 64-byte chunk (the one-call parse's shape).
    private const string Accept = "text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7";
    private const string Section = "Host: tfb-server\r\nAccept: " + Accept + "\r\n";

    private static ValueTask Echo(HttpContext context)
    {
        HttpRequest request = context.Request;
        RequestHeaders headers = request.Headers;
        context.Response.Write(Encoding.Latin1.GetBytes(
            $"{request.MethodName}|{Encoding.Latin1.GetString(request.RawTarget)}|{request.Protocol}"
            + $"|host={headers.Host}|accept={headers.Accept}|custom={headers["X-Custom"]}|count={headers.Count}"));
        return default;
    }

    private static string Expected(string target, string accept = Accept, string version = "HTTP/1.1", string custom = "", int count = 2)
        => $"GET|{target}|{version}|host=tfb-server|accept={accept}|custom={custom}|count={count}";

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Pipelined_heads_that_repeat_whole_then_change_in_their_line_or_their_section_are_parsed_as_sent()
    {
        await using TestServer host = await StartServerAsync(Echo);
        using RawClient client = host.Connect();
        string changedAccept = Accept.Replace("q=0.7", "q=0.6", StringComparison.Ordinal);
        string same = "GET /plaintext HTTP/1.1\r\n" + Section + "\r\n";

        // Five of the same head keep it whole (the first line and section of a connection are not kept, nor is the first
        // head whose parts both repeat), so each change below follows heads taken with one compare, and each is followed by
        // the kept head again, which must not be taken for the changed one.
        var requests = new List<(string Head, string Expected)>();
        void Repeat(int times)
        {
            for (int i = 0; i < times; i++)
            {
                requests.Add((same, Expected("/plaintext")));
            }
        }

        Repeat(6);
        requests.Add(("GET /plaintext HTTP/1.1\r\n" + Section.Replace("q=0.7", "q=0.6", StringComparison.Ordinal) + "\r\n",
            Expected("/plaintext", changedAccept)));
        Repeat(3);
        requests.Add(("GET /plaintexu HTTP/1.1\r\n" + Section + "\r\n", Expected("/plaintexu")));
        Repeat(3);
        requests.Add(("GET /plaintext HTTP/1.1\r\n" + Section + "X-Custom: one\r\n\r\n", Expected("/plaintext", custom: "one", count: 3)));
        Repeat(3);
        requests.Add(("GET /plaintext HTTP/1.0\r\nConnection: keep-alive\r\n" + Section + "\r\n", "GET|/plaintext|HTTP/1.0|host=tfb-server|accept="
            + Accept + "|custom=|count=3"));
        Repeat(3);

        var batch = new StringBuilder();
        foreach ((string head, _) in requests)
        {
            batch.Append(head);
        }

        await client.SendAsync(batch.ToString());
        foreach ((_, string expected) in requests)
        {
            (await client.ReadResponseAsync()).BodyText.ShouldBe(expected);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_header_the_application_replaces_after_the_head_was_kept_is_read_again_from_the_next_requests_bytes()
    {
        int requestNumber = 0;
        await using TestServer host = await StartServerAsync(context =>
        {
            ValueTask echo = Echo(context);
            if (++requestNumber == 7)
            {
                context.Request.Headers.Accept = "replaced";
                context.Request.Headers["X-Custom"] = "added";
            }

            return echo;
        });
        using RawClient client = host.Connect();
        string same = "GET /plaintext HTTP/1.1\r\n" + Section + "\r\n";
        for (int i = 0; i < 10; i++)
        {
            await client.SendAsync(same);
            (await client.ReadResponseAsync()).BodyText.ShouldBe(Expected("/plaintext"), $"request {i + 1}");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_kept_head_whose_request_asks_to_close_or_is_a_HEAD_still_gets_its_own_answer()
    {
        await using TestServer host = await StartServerAsync(Echo);
        using RawClient client = host.Connect();
        string same = "GET /plaintext HTTP/1.1\r\n" + Section + "\r\n";
        for (int i = 0; i < 6; i++)
        {
            await client.SendAsync(same);
            (await client.ReadResponseAsync()).BodyText.ShouldBe(Expected("/plaintext"));
        }

        await client.SendAsync("HEAD /plaintext HTTP/1.1\r\n" + Section + "\r\n");
        RawResponse head = await client.ReadResponseAsync(headRequest: true);
        head.Body.Length.ShouldBe(0);
        await client.SendAsync(same + "GET /plaintext HTTP/1.1\r\nConnection: close\r\n" + Section + "\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe(Expected("/plaintext"));
        (await client.ReadResponseAsync()).BodyText.ShouldBe(Expected("/plaintext", count: 3), "Connection is the third header");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Fact]
    public void A_repeated_bytes_stamp_changes_whenever_the_kept_run_is_forgotten_or_replaced()
    {
        var kept = new RepeatedBytes();
        byte[] run = "GET /plaintext HTTP/1.1\r\n"u8.ToArray();
        kept.Keep(run, 256);
        kept.Keep(run, 256).ShouldBeTrue();
        int stamp = kept.Stamp;
        kept.Match(run).ShouldBe(run.Length);
        kept.Stamp.ShouldBe(stamp, "a match changes nothing");

        kept.Forget();
        kept.Stamp.ShouldNotBe(stamp);
        stamp = kept.Stamp;
        kept.Keep(run, 256).ShouldBeTrue();
        kept.Stamp.ShouldNotBe(stamp, "the same bytes kept again are another run: what they parsed to was set again");
    }

    [Fact]
    public void A_head_whose_line_and_section_both_repeat_is_kept_whole_and_then_taken_without_the_line_or_section_calls()
    {
        var calls = new List<string>();
        var handler = new RecordingHandler(calls, repeatLine: 25, repeatSection: 11, repeatHead: 0);
        byte[] head = new byte[36 + 64];
        "GET /plaintext HTTP/1.1\r\n"u8.CopyTo(head);
        "Host: x\r\n\r\n"u8.CopyTo(head.AsSpan(25));

        Http1Parser.TryParseRepeatableRequestHead(ref handler, head, HttpLimits.Default, out int consumed).ShouldBeTrue();
        consumed.ShouldBe(36);
        calls.ShouldBe(["head?", "line?", "section?", "keep head 36"], "both parts repeated: no header check again, the head kept whole");

        calls.Clear();
        handler = new RecordingHandler(calls, repeatLine: 25, repeatSection: 11, repeatHead: 36);
        Http1Parser.TryParseRepeatableRequestHead(ref handler, head, HttpLimits.Default, out consumed).ShouldBeTrue();
        consumed.ShouldBe(36);
        calls.ShouldBe(["head?"]);

        calls.Clear();
        handler = new RecordingHandler(calls, repeatLine: 0, repeatSection: 11, repeatHead: 0);
        Http1Parser.TryParseRepeatableRequestHead(ref handler, head, HttpLimits.Default, out _);
        calls.ShouldNotContain("keep head 36", "a parsed line is no repeat: the head is not kept");
        calls.ShouldContain("headers complete");
    }

    /// <summary>Answers the repeat questions as told and records every call the parser makes.</summary>
    private readonly struct RecordingHandler(List<string> calls, int repeatLine, int repeatSection, int repeatHead)
        : IHttpRequestLineHandler, IHttpHeadersHandler, IRepeatedRequestLineHandler, IRepeatedHeaderSectionHandler
    {
        public void OnRequestLine(KnownMethod method, ReadOnlySpan<byte> methodToken, ReadOnlySpan<byte> target,
            RequestTargetForm form, int queryIndex, KnownVersion version) => calls.Add("line");

        public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        {
            calls.Add("header");
            return true;
        }

        public void OnHeadersComplete() => calls.Add("headers complete");

        public int TryRepeatRequestLine(ReadOnlySpan<byte> received)
        {
            calls.Add("line?");
            return repeatLine;
        }

        public void RememberRequestLine(ReadOnlySpan<byte> line) => calls.Add("keep line " + line.Length);

        public int TryRepeatRequestHead(ReadOnlySpan<byte> received)
        {
            calls.Add("head?");
            return repeatHead;
        }

        public void RememberRequestHead(ReadOnlySpan<byte> head) => calls.Add("keep head " + head.Length);

        public int TryRepeatHeaderSection(ReadOnlySpan<byte> received)
        {
            calls.Add("section?");
            return repeatSection;
        }

        public void RememberHeaderSection(ReadOnlySpan<byte> section) => calls.Add("keep section " + section.Length);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class RepeatedRequestHeadTestsOnLibuv : RepeatedRequestHeadTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class RepeatedRequestHeadTestsOnIoUring : RepeatedRequestHeadTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
