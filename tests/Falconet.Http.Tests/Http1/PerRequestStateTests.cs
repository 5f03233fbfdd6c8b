using System;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// A kept-alive connection reuses one request, response and body reader for all its requests, and resets only the state a
/// request can have changed: every request must start with all of it fresh, whatever the request before it did.
/// </summary>
public class PerRequestStateTests : ServerTests
{
    // What the handler sees before it does anything, then what the request's own target asks it to do.
    private static async ValueTask ReportThenAct(HttpContext context)
    {
        HttpRequest request = context.Request;
        HttpResponse response = context.Response;
        RequestBodyReader body = request.BodyReader;
        string seen = $"read={body.BytesRead}|continue={body.ContinueSent}|complete={body.IsCompleted}|status={response.StatusCode}"
            + $"|headers={response.Headers.Count}|started={response.HasStarted}|written={response.BytesWritten}"
            + $"|trailers={request.Trailers.Count}";
        string target = Encoding.Latin1.GetString(request.RawTarget);
        if (target.StartsWith("/read", StringComparison.Ordinal))
        {
            byte[] buffer = new byte[64];
            while (await body.ReadAsync(buffer) > 0)
            {
            }
        }

        // Every request leaves behind as much as it can: a status, headers of both kinds, a body and trailers it read.
        response.StatusCode = 201;
        response.Headers.ContentType = "text/x-seen";
        response.Headers["X-Left-Behind"] = "yes";
        response.Write(Encoding.Latin1.GetBytes(seen));
    }

    private const string Fresh = "read=0|continue=False|complete=True|status=200|headers=0|started=False|written=0|trailers=0";

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_request_after_one_that_read_a_chunked_body_with_trailers_starts_with_nothing_read_and_nothing_set()
    {
        await using TestServer host = await StartServerAsync(ReportThenAct);
        using RawClient client = host.Connect();
        await client.SendAsync(string.Concat(
            "GET /first HTTP/1.1\r\nHost: test\r\n\r\n",
            "POST /read HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n",
            "GET /after-chunked HTTP/1.1\r\nHost: test\r\n\r\n",
            "POST /read HTTP/1.1\r\nHost: test\r\nContent-Length: 7\r\n\r\nabcdefg",
            "GET /after-length HTTP/1.1\r\nHost: test\r\n\r\n",
            "POST /unread HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\n\r\nxyz",
            "GET /after-unread HTTP/1.1\r\nHost: test\r\n\r\n"));

        (await client.ReadResponseAsync()).BodyText.ShouldBe(Fresh);
        (await client.ReadResponseAsync()).BodyText.ShouldBe(Fresh.Replace("complete=True", "complete=False", StringComparison.Ordinal));
        RawResponse afterChunked = await client.ReadResponseAsync();
        afterChunked.BodyText.ShouldBe(Fresh);
        afterChunked.StatusCode.ShouldBe(201);
        (await client.ReadResponseAsync()).BodyText.ShouldBe(Fresh.Replace("complete=True", "complete=False", StringComparison.Ordinal));
        (await client.ReadResponseAsync()).BodyText.ShouldBe(Fresh);
        (await client.ReadResponseAsync()).BodyText.ShouldBe(Fresh.Replace("complete=True", "complete=False", StringComparison.Ordinal));
        (await client.ReadResponseAsync()).BodyText.ShouldBe(Fresh);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_request_after_one_that_was_sent_100_Continue_starts_without_it()
    {
        await using TestServer host = await StartServerAsync(ReportThenAct);
        using RawClient client = host.Connect();
        await client.SendAsync("POST /read HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
        (await client.ReadResponseAsync()).StatusLine.ShouldBe("HTTP/1.1 100 Continue");
        await client.SendAsync("abc");
        (await client.ReadResponseAsync()).BodyText.ShouldBe(Fresh.Replace("complete=True", "complete=False", StringComparison.Ordinal));

        await client.SendAsync("GET /after-continue HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe(Fresh);
        await client.SendAsync("POST /read HTTP/1.1\r\nHost: test\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe(Fresh, "an empty body is complete at once: no 100 Continue");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task What_a_request_read_is_reported_to_the_handler_that_reads_it()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            RequestBodyReader body = context.Request.BodyReader;
            byte[] buffer = new byte[64];
            while (await body.ReadAsync(buffer) > 0)
            {
            }

            context.Response.Write(Encoding.Latin1.GetBytes($"read={body.BytesRead}|trailers={context.Request.Trailers.Count}"));
        });
        using RawClient client = host.Connect();
        await client.SendAsync(string.Concat(
            "POST /read HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: test\r\n\r\n",
            "POST /read HTTP/1.1\r\nHost: test\r\nContent-Length: 7\r\n\r\nabcdefg"));
        (await client.ReadResponseAsync()).BodyText.ShouldBe("read=5|trailers=1", "the state the next request must not see is really set");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("read=0|trailers=0");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("read=7|trailers=0");
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class PerRequestStateTestsOnLibuv : PerRequestStateTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class PerRequestStateTestsOnIoUring : PerRequestStateTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
