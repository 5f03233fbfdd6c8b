using System;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// A kept-alive connection whose header section repeats the previous one byte for byte takes the previous parse whole:
/// every request must still see exactly the headers its own bytes say, whatever the application did to the last ones.
/// </summary>
public class RepeatedHeaderSectionTests : ServerTests
{
    // Long enough that every head, alone in a read, is at least one 64-byte chunk (the one-call parse's shape).
    private const string Accept = "text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7";

    private static ValueTask EchoHeaders(HttpContext context)
    {
        RequestHeaders headers = context.Request.Headers;
        context.Response.Write(Encoding.Latin1.GetBytes(
            $"{context.Request.RawTarget.Length}|host={headers.Host}|accept={headers.Accept}|length={headers.ContentLength}"
            + $"|custom={headers["X-Custom"]}|count={headers.Count}"));
        return default;
    }

    private static string Head(string target, string section, string version = "HTTP/1.1") => $"GET {target} {version}\r\n{section}\r\n";

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Sixteen_pipelined_requests_with_the_same_header_lines_each_see_all_of_them()
    {
        await using TestServer host = await StartServerAsync(EchoHeaders);
        using RawClient client = host.Connect();
        string section = $"Host: tfb-server\r\nAccept: {Accept}\r\nContent-Length: 0\r\n";
        var batch = new StringBuilder();
        for (int i = 0; i < 16; i++)
        {
            batch.Append(Head("/p" + new string('x', i), section));
        }

        await client.SendAsync(batch.ToString());
        for (int i = 0; i < 16; i++)
        {
            (await client.ReadResponseAsync()).BodyText.ShouldBe($"{2 + i}|host=tfb-server|accept={Accept}|length=0|custom=|count=3");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_header_the_application_replaced_is_read_again_from_the_next_requests_bytes()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            ValueTask echo = EchoHeaders(context);
            context.Request.Headers.Accept = "replaced";
            context.Request.Headers.Host = default;
            return echo;
        });
        using RawClient client = host.Connect();
        string request = Head("/same", $"Host: tfb-server\r\nAccept: {Accept}\r\n");
        for (int i = 0; i < 4; i++)
        {
            await client.SendAsync(request);
            (await client.ReadResponseAsync()).BodyText.ShouldBe($"5|host=tfb-server|accept={Accept}|length=|custom=|count=2");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Sections_that_differ_in_one_byte_a_missing_line_or_an_unknown_header_are_parsed_as_sent()
    {
        await using TestServer host = await StartServerAsync(EchoHeaders);
        using RawClient client = host.Connect();
        string full = $"Host: tfb-server\r\nAccept: {Accept}\r\n";
        string changed = full.Replace("q=0.7", "q=0.6", StringComparison.Ordinal);
        string custom = $"Host: tfb-server\r\nX-Custom: one\r\nAccept: {Accept}\r\n";
        string twice = $"Host: tfb-server\r\nAccept: {Accept}\r\nAccept: second\r\n";
        string withLength = $"Host: tfb-server\r\nAccept: {Accept}\r\nContent-Length: 0\r\n";
        string plain = $"accept={Accept}|length=|custom=|count=2";

        // Each kind of section three times in a row: the first of a connection is never kept, so the third is a repeat
        // wherever a section can be repeated at all.
        string[] sections = [full, full, full, changed, full, custom, custom, custom, twice, twice, twice, withLength, withLength, withLength, full];
        string[] expected =
        [
            plain, plain, plain,
            $"accept={Accept.Replace("q=0.7", "q=0.6", StringComparison.Ordinal)}|length=|custom=|count=2",
            plain,
            $"accept={Accept}|length=|custom=one|count=3",
            $"accept={Accept}|length=|custom=one|count=3",
            $"accept={Accept}|length=|custom=one|count=3",
            $"accept={Accept},second|length=|custom=|count=2",
            $"accept={Accept},second|length=|custom=|count=2",
            $"accept={Accept},second|length=|custom=|count=2",
            $"accept={Accept}|length=0|custom=|count=3",
            $"accept={Accept}|length=0|custom=|count=3",
            $"accept={Accept}|length=0|custom=|count=3",
            plain,
        ];

        for (int i = 0; i < sections.Length; i++)
        {
            await client.SendAsync(Head("/r", sections[i]));
            (await client.ReadResponseAsync()).BodyText.ShouldBe("2|host=tfb-server|" + expected[i]);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_repeated_section_without_Host_is_still_refused_under_HTTP_1_1()
    {
        await using TestServer host = await StartServerAsync(EchoHeaders);
        using RawClient client = host.Connect();
        string section = $"Accept: {Accept}\r\nConnection: keep-alive\r\n";
        for (int i = 0; i < 2; i++)
        {
            // The second is kept, so the request below repeats it.
            await client.SendAsync(Head("/old", section, "HTTP/1.0"));
            (await client.ReadResponseAsync()).BodyText.ShouldBe($"4|host=|accept={Accept}|length=|custom=|count=2");
        }

        await client.SendAsync(Head("/new", section));
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(400);
    }

    private static readonly byte[] s_section = Encoding.ASCII.GetBytes($"Host: tfb-server\r\nAccept: {Accept}\r\nContent-Length: 5\r\n\r\n");

    // What the parser does for one section: Clear at the request line, one Append per line, then the section offered.
    private static void Parse(RequestHeaders headers, string accept = Accept)
    {
        headers.Clear();
        headers.Append("Host"u8, "tfb-server"u8);
        headers.Append("Accept"u8, Encoding.ASCII.GetBytes(accept));
        headers.Append("Content-Length"u8, "5"u8);
        headers.RememberSection(s_section);
    }

    [Fact]
    public void The_collection_repeats_a_kept_section_from_the_second_on_and_restores_its_headers()
    {
        var headers = new RequestHeaders();
        Parse(headers);
        headers.Clear();
        headers.TryRepeatSection(s_section).ShouldBe(0, "the first section offered is not kept");

        Parse(headers);
        headers.Clear();
        byte[] withNextRequest = [.. s_section, .. "GET / HTTP/1.1\r\n"u8];
        headers.TryRepeatSection(withNextRequest).ShouldBe(s_section.Length);
        headers.Host.ToString().ShouldBe("tfb-server");
        headers.Accept.ToString().ShouldBe(Accept);
        headers.ContentLength.ShouldBe(5);
        headers.Count.ShouldBe(3);

        headers.Clear();
        headers.TryRepeatSection(s_section.AsSpan(0, s_section.Length - 1)).ShouldBe(0, "a section cut short is not a repeat");
        byte[] oneByteOff = [.. s_section];
        oneByteOff[^5] = (byte)'6';
        headers.TryRepeatSection(oneByteOff).ShouldBe(0);
        headers.Count.ShouldBe(0);
    }

    [Fact]
    public void A_slot_written_since_the_section_was_kept_stops_the_repeat()
    {
        var replaced = new RequestHeaders();
        Parse(replaced);
        Parse(replaced);
        replaced.Accept = "replaced";
        replaced.Clear();
        replaced.TryRepeatSection(s_section).ShouldBe(0);

        var reparsed = new RequestHeaders();
        Parse(reparsed);
        Parse(reparsed);
        reparsed.Clear();
        reparsed.Append("Accept"u8, "text/html"u8);
        reparsed.Clear();
        reparsed.TryRepeatSection(s_section).ShouldBe(0, "a new value in a slot forgets the kept section");
    }

    [Fact]
    public void A_collection_whose_sections_keep_changing_stops_keeping_them_after_two_misses()
    {
        var headers = new RequestHeaders();
        Parse(headers, "first");
        Parse(headers, "second");
        for (int miss = 0; miss < RepeatedBytes.MaxMisses; miss++)
        {
            headers.Clear();
            headers.TryRepeatSection(s_otherSection).ShouldBe(0);
            Parse(headers, "third" + miss);
        }

        headers.Clear();
        headers.TryRepeatSection(s_section).ShouldBe(0, "nothing was kept after the second miss");
        Parse(headers);
        headers.Clear();
        headers.TryRepeatSection(s_section).ShouldBe(0, "nor is anything kept later");
    }

    // s_section with a byte of its Accept value changed.
    private static readonly byte[] s_otherSection = Encoding.ASCII.GetBytes(
        $"Host: tfb-server\r\nAccept: {Accept.Replace("q=0.7", "q=0.6", StringComparison.Ordinal)}\r\nContent-Length: 5\r\n\r\n");

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Pipelined_requests_with_a_rotating_cookie_each_see_their_own_cookie()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write(Encoding.Latin1.GetBytes($"{context.Request.Headers["Cookie"]}|{context.Request.Headers.Host}"));
            return default;
        });
        using RawClient client = host.Connect();
        var batch = new StringBuilder();
        for (int i = 0; i < 8; i++)
        {
            batch.Append(Head("/c", $"Host: tfb-server\r\nAccept: {Accept}\r\nCookie: id={i % 3}\r\n"));
        }

        await client.SendAsync(batch.ToString());
        for (int i = 0; i < 8; i++)
        {
            (await client.ReadResponseAsync()).BodyText.ShouldBe($"id={i % 3}|tfb-server");
        }
    }
}
