using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.Extensions.Primitives;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>The status line and headers on the wire: a head that cannot be written, bodyless statuses, framing per version.</summary>
public class ResponseHeadTests : ServerTests
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
        await using TestServer host = await StartServerAsync(OkOr(async context =>
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
    public async Task Head_copied_from_the_previous_response_follows_every_change_of_status_and_header_values()
    {
        // The connection copies the bytes of the previous head when status and value instances are the same, with its
        // Content-Length line when the length is the same too; every other change must be written afresh. The array
        // behind a StringValues may change between responses: it is the same instance, its element is not.
        string?[] shared = ["first"];
        var sharedValues = new StringValues(shared);
        var staticType = new StringValues("text/plain");
        await using TestServer host = await StartServerAsync(context =>
        {
            HttpResponse response = context.Response;
            switch (context.Request.Path)
            {
                case "/same":
                    response.Headers.ContentType = staticType;
                    break;
                case "/status":
                    response.StatusCode = 202;
                    response.Headers.ContentType = staticType;
                    break;
                case "/equal-text":
                    response.Headers.ContentType = new string("text/plain".AsSpan());
                    break;
                case "/other-text":
                    response.Headers.ContentType = "text/html";
                    break;
                case "/array-first":
                    shared[0] = "first";
                    response.Headers.CacheControl = sharedValues;
                    break;
                case "/array-second":
                    shared[0] = "second";
                    response.Headers.CacheControl = sharedValues;
                    break;
                case "/two-values":
                    response.Headers.CacheControl = new StringValues(["a", "b"]);
                    break;
                case "/unknown":
                    response.Headers.ContentType = staticType;
                    response.Headers["X-Extra"] = "1";
                    break;
                case "/longer":
                    response.Headers.ContentType = staticType;
                    response.Write("0123456789"u8);
                    return default;
            }

            response.Write("x"u8);
            return default;
        });
        (string Path, string Status, string[] Lines)[] expected =
        [
            ("/same", "HTTP/1.1 200 OK", ["Content-Type: text/plain"]),
            ("/same", "HTTP/1.1 200 OK", ["Content-Type: text/plain"]),
            ("/status", "HTTP/1.1 202 Accepted", ["Content-Type: text/plain"]),
            ("/same", "HTTP/1.1 200 OK", ["Content-Type: text/plain"]),
            ("/equal-text", "HTTP/1.1 200 OK", ["Content-Type: text/plain"]),
            ("/other-text", "HTTP/1.1 200 OK", ["Content-Type: text/html"]),
            ("/array-first", "HTTP/1.1 200 OK", ["Cache-Control: first"]),
            ("/array-second", "HTTP/1.1 200 OK", ["Cache-Control: second"]),
            ("/array-first", "HTTP/1.1 200 OK", ["Cache-Control: first"]),
            ("/two-values", "HTTP/1.1 200 OK", ["Cache-Control: a", "Cache-Control: b"]),
            ("/two-values", "HTTP/1.1 200 OK", ["Cache-Control: a", "Cache-Control: b"]),
            ("/unknown", "HTTP/1.1 200 OK", ["Content-Type: text/plain", "X-Extra: 1"]),
            ("/same", "HTTP/1.1 200 OK", ["Content-Type: text/plain"]),
            ("/longer", "HTTP/1.1 200 OK", ["Content-Type: text/plain"]),
            ("/longer", "HTTP/1.1 200 OK", ["Content-Type: text/plain"]),
            ("/same", "HTTP/1.1 200 OK", ["Content-Type: text/plain"]),
            ("/unknown", "HTTP/1.1 200 OK", ["Content-Type: text/plain", "X-Extra: 1"]),
            ("/longer", "HTTP/1.1 200 OK", ["Content-Type: text/plain"]),
            ("/nothing", "HTTP/1.1 200 OK", []),
        ];
        using RawClient client = host.Connect();

        // Pipelined, so the heads follow each other in one batch as well as across reads.
        await client.SendAsync(string.Concat(Array.ConvertAll(expected, request => $"GET {request.Path} HTTP/1.1\r\nHost: test\r\n\r\n")));
        foreach ((string path, string status, string[] lines) in expected)
        {
            (await client.ReadLineAsync()).ShouldBe(status, path);
            var head = new List<string>();
            string? line;
            while ((line = await client.ReadLineAsync())!.Length != 0)
            {
                head.Add(line);
            }

            // The Date value may have moved on between two responses: its line is checked apart.
            head.Count(line => line.StartsWith("Date: ", StringComparison.Ordinal)).ShouldBe(1, path);
            head.RemoveAll(line => line.StartsWith("Date: ", StringComparison.Ordinal));
            string body = path == "/longer" ? "0123456789" : "x";
            head.ShouldBe([.. lines, "Server: Falconet", $"Content-Length: {body.Length}"], ignoreOrder: true, customMessage: path);
            Encoding.ASCII.GetString(await client.ReadExactAsync(body.Length)).ShouldBe(body, path);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Responses_like_the_previous_one_are_still_framed_for_their_own_request_and_connection()
    {
        // The connection writes a head the same as the previous one in one copy; each request below changes one thing that
        // must show in its head, right after responses that were copied.
        var type = new StringValues("text/plain");
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Headers.ContentType = type;
            if (context.Request.Path == "/close")
            {
                context.Response.Headers.Connection = "close";
            }

            context.Response.Write("hello"u8);
            return default;
        });
        const string Same = "GET /same HTTP/1.1\r\nHost: test\r\n\r\n";
        (string Request, string? Connection, bool Head, bool Closes)[] expected =
        [
            (Same, null, false, false),
            (Same, null, false, false),
            (Same, null, false, false),
            ("HEAD /same HTTP/1.1\r\nHost: test\r\n\r\n", null, true, false),
            (Same, null, false, false),
            ("GET /same HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "keep-alive", false, false),
            (Same, null, false, false),
            (Same, null, false, false),
            ("GET /same HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", "close", false, true),
        ];
        using RawClient client = host.Connect();
        await client.SendAsync(string.Concat(Array.ConvertAll(expected, e => e.Request)));
        foreach ((string request, string? connection, bool head, bool closes) in expected)
        {
            RawResponse response = await client.ReadResponseAsync(headRequest: head);
            response.StatusCode.ShouldBe(200, request);
            response.Header("Connection").ShouldBe(connection, request);
            response.Header("Content-Length").ShouldBe("5", request);
            response.Header("Content-Type").ShouldBe("text/plain", request);
            response.BodyText.ShouldBe(head ? "" : "hello", request);
            if (closes)
            {
                (await client.IsClosedByServerAsync()).ShouldBeTrue(request);
            }
        }

        // The application's own Connection: close, after copied heads on a new connection.
        using RawClient second = host.Connect();
        await second.SendAsync(Same + Same + Same + "GET /close HTTP/1.1\r\nHost: test\r\n\r\n");
        for (int i = 0; i < 3; i++)
        {
            (await second.ReadResponseAsync()).Header("Connection").ShouldBeNull();
        }

        (await second.ReadResponseAsync()).Header("Connection").ShouldBe("close");
        (await second.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_copied_head_takes_the_new_Date_once_the_second_changes()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write("x"u8);
            return default;
        });
        using RawClient client = host.Connect();
        const string Same = "GET /same HTTP/1.1\r\nHost: test\r\n\r\n";
        string? first = null;
        for (int i = 0; i < 3; i++)
        {
            await client.SendAsync(Same);
            first = (await client.ReadResponseAsync()).Header("Date");
        }

        // Bounded: the value changes once a second.
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (DateHeaderValues.Text == first && waited.Elapsed < TimeSpan.FromSeconds(3))
        {
            await Task.Delay(20);
        }

        string now = DateHeaderValues.Text;
        now.ShouldNotBe(first);
        await client.SendAsync(Same);
        string? date = (await client.ReadResponseAsync()).Header("Date");
        date.ShouldNotBe(first);
        DateTimeOffset.Parse(date!, System.Globalization.CultureInfo.InvariantCulture).ShouldBeGreaterThanOrEqualTo(
            DateTimeOffset.Parse(now, System.Globalization.CultureInfo.InvariantCulture));
    }

    [Fact]
    public void Kept_header_values_stay_kept_while_slots_are_given_the_same_strings_and_not_once_one_is_replaced()
    {
        var headers = new ResponseHeaders();
        var type = new StringValues("text/plain");
        var server = new StringValues("Falconet");
        headers.ContentType = type;
        headers.Server = server;
        headers.TryKeepKnownValues().ShouldBeTrue();
        ulong kept = headers.KnownBits;

        // The next response: cleared, then the same instances set again.
        headers.Clear();
        headers.ContentType = type;
        headers.HasKeptKnownValues(kept).ShouldBeFalse("Server is not set yet");
        headers.Server = server;
        headers.HasKeptKnownValues(kept).ShouldBeTrue();

        headers.Clear();
        headers.ContentType = type;
        headers.Server = new string("Falconet".AsSpan());
        headers.HasKeptKnownValues(kept).ShouldBeFalse("an equal string that is another instance is a replacement");
        headers.Server.ToString().ShouldBe("Falconet");

        headers.TryKeepKnownValues().ShouldBeTrue();
        headers.Server = server;
        headers.HasKeptKnownValues(kept).ShouldBeFalse("the kept one was the other instance");

        headers.CacheControl = new StringValues(["no-cache"]);
        headers.TryKeepKnownValues().ShouldBeFalse("a string array's element can change under the same instance");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Head_failing_after_several_blocks_of_headers_is_taken_back_whole()
    {
        string large = new('v', 9_000);
        await using TestServer host = await StartServerAsync(OkOr(context =>
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
    public async Task Head_of_several_blocks_of_headers_arrives_whole_and_in_order()
    {
        string large = new('v', 9_000);
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Headers.ContentType = large;
            context.Response.Headers["X-First"] = large + "1";
            context.Response.Headers["X-Second"] = "2";
            context.Response.Write("body"u8);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n");
        for (int i = 0; i < 2; i++)
        {
            RawResponse response = await client.ReadResponseAsync();
            response.Header("Content-Type").ShouldBe(large);
            response.Header("X-First").ShouldBe(large + "1");
            response.Header("X-Second").ShouldBe("2");
            response.BodyText.ShouldBe("body");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Handler_that_catches_a_failed_start_and_fixes_the_header_sends_its_response_as_if_never_tried()
    {
        Exception? failure = null;
        bool startedAfterFailure = true;
        await using TestServer host = await StartServerAsync(async context =>
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

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task No_content_response_drops_content_length_and_transfer_encoding_set_by_the_handler()
    {
        await using TestServer host = await StartServerAsync(OkOr(context =>
        {
            context.Response.StatusCode = 204;
            context.Response.ContentLength = 0;
            context.Response.Headers.TransferEncoding = "chunked";
            return default;
        }));
        using RawClient client = host.Connect();
        await client.SendAsync(Request("none") + Request("ok"));
        RawResponse response = await client.ReadResponseAsync();
        response.StatusLine.ShouldBe("HTTP/1.1 204 No Content");
        response.Header("Content-Length").ShouldBeNull();
        response.Header("Transfer-Encoding").ShouldBeNull();
        (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task No_content_response_that_flushes_has_no_framing_headers_either()
    {
        await using TestServer host = await StartServerAsync(OkOr(async context =>
        {
            context.Response.StatusCode = 204;
            await context.Response.FlushAsync();
        }));
        using RawClient client = host.Connect();
        await client.SendAsync(Request("none") + Request("ok"));
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(204);
        response.Header("Content-Length").ShouldBeNull();
        response.Header("Transfer-Encoding").ShouldBeNull();
        (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Not_modified_keeps_a_content_length_the_handler_set_and_never_computes_one()
    {
        await using TestServer host = await StartServerAsync(OkOr(context =>
        {
            context.Response.StatusCode = 304;
            context.Response.Headers.TransferEncoding = "chunked";
            if (context.Request.PathBytes.SequenceEqual("/declared"u8))
            {
                context.Response.ContentLength = 1234;
            }

            return default;
        }));
        using RawClient client = host.Connect();
        await client.SendAsync(Request("declared") + Request("plain") + Request("ok"));
        RawResponse declared = await client.ReadResponseAsync();
        declared.StatusLine.ShouldBe("HTTP/1.1 304 Not Modified");
        declared.Header("Content-Length").ShouldBe("1234");
        declared.Header("Transfer-Encoding").ShouldBeNull();
        RawResponse plain = await client.ReadResponseAsync();
        plain.StatusCode.ShouldBe(304);
        plain.Header("Content-Length").ShouldBeNull();
        plain.Header("Transfer-Encoding").ShouldBeNull();

        // A body sent after either 304 would be read here as the start of the next response.
        (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Head_response_keeps_a_declared_content_length_and_sends_no_body()
    {
        await using TestServer host = await StartServerAsync(OkOr(context =>
        {
            context.Response.ContentLength = 5000;
            return default;
        }));
        using RawClient client = host.Connect();
        await client.SendAsync("HEAD /file HTTP/1.1\r\nHost: test\r\n\r\n" + Request("ok"));
        RawResponse head = await client.ReadResponseAsync(headRequest: true);
        head.StatusCode.ShouldBe(200);
        head.Header("Content-Length").ShouldBe("5000");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Http10_client_never_gets_chunked_a_buffered_body_gets_its_length()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Headers.TransferEncoding = "chunked";
            context.Response.Write("buffered body"u8);
            return default;
        });
        using RawClient client = host.Connect();
        for (int i = 0; i < 2; i++)
        {
            await client.SendAsync("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            response.Header("Transfer-Encoding").ShouldBeNull();
            response.Header("Content-Length").ShouldBe("13");
            response.Header("Connection").ShouldBe("keep-alive");
            response.BodyText.ShouldBe("buffered body");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Http10_client_never_gets_chunked_a_streamed_body_is_delimited_by_the_close()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            context.Response.Headers.TransferEncoding = "chunked";
            context.Response.Write("streamed "u8);
            await context.Response.FlushAsync();
            await context.Response.WriteAsync("body"u8.ToArray());
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.Header("Transfer-Encoding").ShouldBeNull();
        response.Header("Content-Length").ShouldBeNull();
        response.Header("Connection").ShouldBe("close");
        response.BodyText.ShouldBe("streamed body");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Declared_content_length_wins_over_a_transfer_encoding_the_handler_also_set()
    {
        await using TestServer host = await StartServerAsync(OkOr(async context =>
        {
            context.Response.Headers.TransferEncoding = "chunked";
            context.Response.ContentLength = 5;
            await context.Response.FlushAsync();
            await context.Response.WriteAsync("hello"u8.ToArray());
        }));
        using RawClient client = host.Connect();
        await client.SendAsync(Request("both") + Request("ok"));
        RawResponse response = await client.ReadResponseAsync();
        response.Header("Transfer-Encoding").ShouldBeNull();
        response.Header("Content-Length").ShouldBe("5");
        response.BodyText.ShouldBe("hello");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(100, "informational")]
    [InlineData(101, "informational")]
    [InlineData(199, "informational")]
    [InlineData(99, "between 200 and 599")]
    [InlineData(600, "between 200 and 599")]
    [InlineData(0, "between 200 and 599")]
    public async Task Status_outside_200_to_599_is_rejected_as_a_final_status(int code, string messagePart)
    {
        ArgumentOutOfRangeException? failure = null;
        int statusAfter = 0;
        await using TestServer host = await StartServerAsync(context =>
        {
            failure = Should.Throw<ArgumentOutOfRangeException>(() => context.Response.StatusCode = code);
            statusAfter = context.Response.StatusCode;
            context.Response.Write("fine"u8);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync(Request("x"));
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe("fine");
        failure.ShouldNotBeNull();
        failure.Message.ShouldContain(messagePart);
        failure.ActualValue.ShouldBe(code);
        statusAfter.ShouldBe(200);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(200)]
    [InlineData(299)]
    [InlineData(599)]
    public async Task Status_from_200_to_599_is_sent(int code)
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.StatusCode = code;
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync(Request("x"));
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(code);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class ResponseHeadTestsOnLibuv : ResponseHeadTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class ResponseHeadTestsOnIoUring : ResponseHeadTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
