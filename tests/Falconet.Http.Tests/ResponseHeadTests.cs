using System;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests;

/// <summary>The status line and headers on the wire: a head that cannot be written.</summary>
public sealed class ResponseHeadTests
{
    private const string Get = "GET /{0} HTTP/1.1\r\nHost: test\r\n\r\n";

    private static string Request(string path) => string.Format(Get, path);

    /// <summary>Answers "/ok" with "ok"; any other path runs <paramref name="other"/>.</summary>
    private static Func<HttpContext, ValueTask> OkOr(Func<HttpContext, ValueTask> other) => context =>
    {
        if (context.Request.PathBytes.SequenceEqual("/ok"u8))
        {
            context.Response.Write("ok"u8);
            return default;
        }

        return other(context);
    };

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("unknown header")]
    [InlineData("known header")]
    [InlineData("unknown header, flushed")]
    [InlineData("known header, flushed")]
    [InlineData("unknown header, past the write-behind bound")]
    public async Task Head_that_cannot_be_written_leaves_no_bytes_and_is_answered_500(string scenario)
    {
        await using TestServer host = await TestServer.StartAsync(OkOr(async context =>
        {
            HttpResponse response = context.Response;
            if (scenario.StartsWith("known", StringComparison.Ordinal))
            {
                response.Headers.ContentType = "text/plain\r\nX-Injected: yes";
            }
            else
            {
                response.Headers["X-Bad"] = "a\r\nb";
            }

            if (scenario.EndsWith("bound", StringComparison.Ordinal))
            {
                // Passing the bound starts the response from inside Write.
                response.Write(new byte[100_000]);
                return;
            }

            response.Write("body"u8);
            if (scenario.EndsWith("flushed", StringComparison.Ordinal))
            {
                await response.FlushAsync();
            }
        }));
        using RawClient client = host.Connect();
        await client.SendAsync(Request("ok") + Request("bad") + Request("ok"));

        (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
        (await client.ReadLineAsync()).ShouldBe("HTTP/1.1 500 Internal Server Error");
        string? line;
        while ((line = await client.ReadLineAsync())!.Length != 0)
        {
            line.ShouldNotStartWith("X-");
            line.ShouldNotStartWith("Content-Type");
            line.ShouldNotStartWith("Transfer-Encoding");
            if (line.StartsWith("Content-Length", StringComparison.Ordinal))
            {
                line.ShouldBe("Content-Length: 0");
            }
        }

        RawResponse after = await client.ReadResponseAsync();
        after.StatusLine.ShouldBe("HTTP/1.1 200 OK");
        after.BodyText.ShouldBe("ok");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Head_failing_after_several_blocks_of_headers_is_taken_back_whole()
    {
        string large = new('v', 9_000);
        await using TestServer host = await TestServer.StartAsync(OkOr(context =>
        {
            // Headers are written in a fixed order (known ones, then unknown ones in insertion order), so the
            // failing value comes after more than two pool blocks of head.
            context.Response.Headers.ContentType = large;
            context.Response.Headers["X-First"] = large;
            context.Response.Headers["X-Bad"] = "bad\nvalue";
            context.Response.Write("body"u8);
            return default;
        }));
        using RawClient client = host.Connect();
        await client.SendAsync(Request("ok") + Request("bad") + Request("ok") + Request("bad") + Request("ok"));
        for (int i = 0; i < 5; i++)
        {
            RawResponse response = await client.ReadResponseAsync();
            response.StatusCode.ShouldBe(i % 2 == 0 ? 200 : 500);
            response.Header("X-First").ShouldBeNull();
            response.BodyText.ShouldBe(i % 2 == 0 ? "ok" : string.Empty);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Handler_that_catches_a_failed_start_and_fixes_the_header_sends_its_response_as_if_never_tried()
    {
        Exception? failure = null;
        bool startedAfterFailure = true;
        await using TestServer host = await TestServer.StartAsync(async context =>
        {
            HttpResponse response = context.Response;
            response.Headers["X-Bad"] = "a\rb";
            response.Write("body"u8);
            try
            {
                await response.FlushAsync();
            }
            catch (InvalidOperationException exception)
            {
                failure = exception;
                startedAfterFailure = response.HasStarted;
                response.Headers.Remove("X-Bad");
            }
        });
        using RawClient client = host.Connect();
        await client.SendAsync(Request("a") + Request("b"));
        for (int i = 0; i < 2; i++)
        {
            RawResponse response = await client.ReadResponseAsync();
            response.StatusCode.ShouldBe(200);

            // The failed start chose chunked framing; it was undone, so the completed body gets its length.
            response.Chunked.ShouldBeFalse();
            response.Header("Transfer-Encoding").ShouldBeNull();
            response.Header("Content-Length").ShouldBe("4");
            response.Header("Server").ShouldBe("Falconet");
            response.Header("X-Bad").ShouldBeNull();
            response.BodyText.ShouldBe("body");
        }

        failure.ShouldNotBeNull();
        startedAfterFailure.ShouldBeFalse();
    }
}
