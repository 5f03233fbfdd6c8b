using System;
using System.Collections.Generic;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.Extensions.Primitives;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// A small body written before the response starts waits behind the connection's remembered head, so that head and body
/// leave in one copy when the head repeats: every response must still carry exactly its own status, headers and body,
/// whatever the handler does after writing (more bytes, another status or header, a flush, a declared length, a failure).
/// </summary>
public class BodyBehindRememberedHeadTests : ServerTests
{
    private static readonly StringValues s_textPlain = new("text/plain");
    private static readonly byte[] s_hello = "Hello, World!"u8.ToArray();

    private static async ValueTask Answer(HttpContext context)
    {
        HttpResponse response = context.Response;
        string path = context.Request.Path;
        response.Headers.ContentType = s_textPlain;
        switch (path)
        {
            case "/pieces":
                response.Write("Hello, "u8);
                response.Write("World!"u8);
                break;
            case "/overflow":
                response.Write(s_hello);
                response.Write(Encoding.ASCII.GetBytes(new string('x', 3000)));
                break;
            case "/status":
                response.Write(s_hello);
                response.StatusCode = 202;
                break;
            case "/header":
                response.Write(s_hello);
                response.Headers["X-Late"] = "set after the body";
                break;
            case "/other-bytes":
                response.Write("Hello, Earth!"u8);
                break;
            case "/shorter":
                response.Write("Hi"u8);
                break;
            case "/flush":
                response.Write(s_hello);
                await response.FlushAsync();
                response.Write("!"u8);
                break;
            case "/writer":
                response.Write(s_hello);
                Memory<byte> memory = response.BodyWriter.GetMemory(5);
                "12345"u8.CopyTo(memory.Span);
                response.BodyWriter.Advance(5);
                break;
            case "/declared":
                response.Headers.ContentLength = 13;
                response.Write(s_hello);
                break;
            case "/bad-header":
                response.Write(s_hello);
                response.Headers["X-Bad"] = "a\r\nb";
                break;
            default:
                response.Write(s_hello);
                break;
        }
    }

    private static string Get(string path) => $"GET {path} HTTP/1.1\r\nHost: test\r\n\r\n";

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Pipelined_responses_after_a_remembered_head_each_carry_their_own_status_headers_and_body()
    {
        await using TestServer host = await StartServerAsync(Answer);
        using RawClient client = host.Connect();

        // Each case follows two answers of the common shape (the first remembers the head, the second sends its body behind
        // it), and is followed by one, which must not carry anything of the case.
        (string Path, int Status, string Body, string? Length)[] cases =
        [
            ("/pieces", 200, "Hello, World!", "13"),
            ("/overflow", 200, "Hello, World!" + new string('x', 3000), "3013"),
            ("/status", 202, "Hello, World!", "13"),
            ("/header", 200, "Hello, World!", "13"),
            ("/other-bytes", 200, "Hello, Earth!", "13"),
            ("/shorter", 200, "Hi", "2"),
            ("/flush", 200, "Hello, World!!", null),
            ("/writer", 200, "Hello, World!12345", "18"),
            ("/declared", 200, "Hello, World!", "13"),
        ];
        var batch = new StringBuilder();
        var expected = new List<(int Status, string Body, string? Length, string? Late)>();
        void Common()
        {
            batch.Append(Get("/same"));
            expected.Add((200, "Hello, World!", "13", null));
        }

        Common();
        Common();
        foreach ((string path, int status, string body, string? length) in cases)
        {
            batch.Append(Get(path));
            expected.Add((status, body, length, path == "/header" ? "set after the body" : null));
            Common();
            Common();
        }

        await client.SendAsync(batch.ToString());
        for (int i = 0; i < expected.Count; i++)
        {
            (int status, string body, string? length, string? late) = expected[i];
            RawResponse response = await client.ReadResponseAsync();
            response.StatusCode.ShouldBe(status, $"response {i}");
            response.BodyText.ShouldBe(body, $"response {i}");
            response.Header("Content-Length").ShouldBe(length, $"response {i}");
            response.Chunked.ShouldBe(length is null, $"response {i}");
            response.Header("X-Late").ShouldBe(late, $"response {i}");
            response.Header("Content-Type").ShouldBe("text/plain", $"response {i}");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_HEAD_an_HTTP_1_0_request_and_a_head_that_cannot_be_written_after_a_remembered_head_get_their_own_answer()
    {
        await using TestServer host = await StartServerAsync(Answer);
        using RawClient client = host.Connect();
        await client.SendAsync(Get("/same") + Get("/same") + "HEAD /same HTTP/1.1\r\nHost: test\r\n\r\n" + Get("/same"));
        (await client.ReadResponseAsync()).BodyText.ShouldBe("Hello, World!");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("Hello, World!");
        RawResponse head = await client.ReadResponseAsync(headRequest: true);
        head.Body.Length.ShouldBe(0);
        head.Header("Content-Length").ShouldBe("13");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("Hello, World!");

        await client.SendAsync("GET /same HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + Get("/same"));
        RawResponse http10 = await client.ReadResponseAsync();
        http10.StatusLine.ShouldStartWith("HTTP/1.1 200");
        http10.BodyText.ShouldBe("Hello, World!");
        http10.Header("Connection").ShouldBe("keep-alive");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("Hello, World!");

        // The body written before the bad header is not sent: the response becomes a 500 of its own.
        await client.SendAsync(Get("/bad-header"));
        RawResponse failed = await client.ReadResponseAsync();
        failed.StatusCode.ShouldBe(500);
        failed.BodyText.ShouldNotContain("Hello");
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class BodyBehindRememberedHeadTestsOnLibuv : BodyBehindRememberedHeadTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class BodyBehindRememberedHeadTestsOnIoUring : BodyBehindRememberedHeadTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
