using System;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// A kept-alive connection whose request line repeats the previous one byte for byte takes the previous parse of it whole:
/// every request must still see exactly the method, target, path, query and version its own bytes say.
/// </summary>
public class RepeatedRequestLineTests : ServerTests
{
    // Long enough that every head, alone in a read, is at least one 64-byte chunk (the one-call parse's shape).
    private const string Section = "Host: tfb-server\r\nAccept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9\r\n\r\n";

    private static ValueTask EchoLine(HttpContext context)
    {
        HttpRequest request = context.Request;
        context.Response.Write(Encoding.Latin1.GetBytes(
            $"{request.MethodName}|{Encoding.Latin1.GetString(request.RawTarget)}|{request.Path}|{request.Query}|{request.Protocol}"));
        return default;
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Pipelined_lines_that_differ_from_the_previous_in_one_byte_are_parsed_as_sent()
    {
        await using TestServer host = await StartServerAsync(EchoLine);
        using RawClient client = host.Connect();

        // Each line at least three times in a row (the first of a connection is never kept, so the third is a repeat), then
        // a line that differs in one place: a byte of the path, the query, the method, the target's length, the version.
        (string Line, string Expected)[] lines =
        [
            ("GET /plaintext HTTP/1.1", "GET|/plaintext|/plaintext||HTTP/1.1"),
            ("GET /plaintext HTTP/1.1", "GET|/plaintext|/plaintext||HTTP/1.1"),
            ("GET /plaintext HTTP/1.1", "GET|/plaintext|/plaintext||HTTP/1.1"),
            ("GET /plaintexu HTTP/1.1", "GET|/plaintexu|/plaintexu||HTTP/1.1"),
            ("GET /plaintext HTTP/1.1", "GET|/plaintext|/plaintext||HTTP/1.1"),
            ("GET /plaintext?a=1 HTTP/1.1", "GET|/plaintext?a=1|/plaintext|a=1|HTTP/1.1"),
            ("GET /plaintext?a=1 HTTP/1.1", "GET|/plaintext?a=1|/plaintext|a=1|HTTP/1.1"),
            ("GET /plaintext?a=2 HTTP/1.1", "GET|/plaintext?a=2|/plaintext|a=2|HTTP/1.1"),
            ("PUT /plaintext?a=2 HTTP/1.1", "PUT|/plaintext?a=2|/plaintext|a=2|HTTP/1.1"),
            ("GET /plaintex HTTP/1.1", "GET|/plaintex|/plaintex||HTTP/1.1"),
            ("GET /plaintext HTTP/1.1", "GET|/plaintext|/plaintext||HTTP/1.1"),
            ("GET /plaintext HTTP/1.0", "GET|/plaintext|/plaintext||HTTP/1.0"),
            ("GET /plaintext HTTP/1.1", "GET|/plaintext|/plaintext||HTTP/1.1"),
        ];

        var batch = new StringBuilder();
        foreach ((string line, _) in lines)
        {
            batch.Append(line).Append("\r\n").Append(line.EndsWith("1.0", StringComparison.Ordinal) ? "Connection: keep-alive\r\n" : "")
                .Append(Section);
        }

        await client.SendAsync(batch.ToString());
        foreach ((_, string expected) in lines)
        {
            (await client.ReadResponseAsync()).BodyText.ShouldBe(expected);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_repeated_HEAD_line_still_gets_a_head_without_a_body_and_the_next_GET_gets_its_body()
    {
        await using TestServer host = await StartServerAsync(EchoLine);
        using RawClient client = host.Connect();
        for (int i = 0; i < 3; i++)
        {
            await client.SendAsync("HEAD /plaintext HTTP/1.1\r\n" + Section);
            RawResponse head = await client.ReadResponseAsync(headRequest: true);
            head.Body.Length.ShouldBe(0);
            head.Headers["Content-Length"][0].ShouldBe("36", "the length of \"HEAD|/plaintext|/plaintext||HTTP/1.1\"");
        }

        await client.SendAsync("GET /plaintext HTTP/1.1\r\n" + Section);
        (await client.ReadResponseAsync()).BodyText.ShouldBe("GET|/plaintext|/plaintext||HTTP/1.1");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_repeated_line_whose_request_asks_to_close_still_closes_the_connection()
    {
        await using TestServer host = await StartServerAsync(EchoLine);
        using RawClient client = host.Connect();
        await client.SendAsync(string.Concat(
            "GET /plaintext HTTP/1.1\r\n" + Section,
            "GET /plaintext HTTP/1.1\r\n" + Section,
            "GET /plaintext HTTP/1.1\r\nConnection: close\r\n" + Section));
        for (int i = 0; i < 3; i++)
        {
            (await client.ReadResponseAsync()).BodyText.ShouldBe("GET|/plaintext|/plaintext||HTTP/1.1");
        }

        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Fact]
    public void Repeated_bytes_are_kept_from_the_second_run_on_and_stop_being_kept_after_two_misses()
    {
        var kept = new RepeatedBytes();
        byte[] run = "GET /plaintext HTTP/1.1\r\n"u8.ToArray();
        byte[] other = "GET /plaintexu HTTP/1.1\r\n"u8.ToArray();

        kept.Keep(run, 256).ShouldBeFalse("the first run offered is not kept");
        kept.Match(run).ShouldBe(0);
        kept.Keep(run, 256).ShouldBeTrue();
        kept.Match([.. run, .. "Host"u8]).ShouldBe(run.Length);
        kept.Match(run.AsSpan(0, run.Length - 1)).ShouldBe(0, "a run cut short is no repeat, and no miss");

        kept.Match(other).ShouldBe(0);
        kept.Keep(other, 256).ShouldBeTrue("one miss: still kept");
        kept.Match(run).ShouldBe(0);
        kept.Keep(run, 256).ShouldBeFalse("two misses: nothing kept any more");
        kept.Length.ShouldBe(0);
        kept.Match(run).ShouldBe(0);
        kept.Keep(new byte[300], 256).ShouldBeFalse();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_repeated_section_without_Host_after_a_line_that_changed_only_its_version_is_refused()
    {
        await using TestServer host = await StartServerAsync(EchoLine);
        using RawClient client = host.Connect();
        const string NoHost = "Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9\r\nConnection: keep-alive\r\n\r\n";
        for (int i = 0; i < 3; i++)
        {
            // From the third on, line and section both repeat: taken whole, and accepted as the first was.
            await client.SendAsync("GET /plaintext HTTP/1.0\r\n" + NoHost);
            (await client.ReadResponseAsync()).BodyText.ShouldBe("GET|/plaintext|/plaintext||HTTP/1.0");
        }

        await client.SendAsync("GET /plaintext HTTP/1.1\r\n" + NoHost);
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(400);
    }
}
