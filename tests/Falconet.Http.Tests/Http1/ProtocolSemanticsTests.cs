using System;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

public class ProtocolSemanticsTests : ServerTests
{
    private static ValueTask Hello(HttpContext context)
    {
        context.Response.Headers.ContentType = "text/plain";
        context.Response.Write("Hello, World!"u8);
        return default;
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Head_response_has_the_get_headers_and_no_body()
    {
        await using TestServer host = await StartServerAsync(Hello);
        using RawClient client = host.Connect();
        await client.SendAsync("HEAD / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse head = await client.ReadResponseAsync(headRequest: true);
        head.StatusCode.ShouldBe(200);
        head.Header("Content-Length").ShouldBe("13");
        head.Header("Content-Type").ShouldBe("text/plain");

        // Were the HEAD body sent, this read would start inside it.
        RawResponse get = await client.ReadResponseAsync();
        get.BodyText.ShouldBe("Hello, World!");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Http10_request_is_answered_then_the_connection_closes()
    {
        await using TestServer host = await StartServerAsync(Hello);
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.0\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusLine.ShouldBe("HTTP/1.1 200 OK");
        response.Header("Connection").ShouldBe("close");
        response.Header("Content-Length").ShouldBe("13");
        response.BodyText.ShouldBe("Hello, World!");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Http10_keep_alive_request_keeps_the_connection()
    {
        await using TestServer host = await StartServerAsync(Hello);
        using RawClient client = host.Connect();
        for (int i = 0; i < 3; i++)
        {
            await client.SendAsync("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            response.Header("Connection").ShouldBe("keep-alive");
            response.BodyText.ShouldBe("Hello, World!");
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("HTTP/1.2")]
    [InlineData("HTTP/1.9")]
    public async Task Higher_minor_version_of_HTTP_1_is_processed_as_HTTP_1_1(string version)
    {
        var protocols = new System.Collections.Concurrent.ConcurrentQueue<string>();
        await using TestServer host = await StartServerAsync(context =>
        {
            protocols.Enqueue(context.Request.Protocol);
            return Hello(context);
        });
        using RawClient client = host.Connect();
        for (int i = 0; i < 2; i++)
        {
            // RFC 9110 section 2.5: answered as the highest minor version supported, so keep-alive is the default.
            await client.SendAsync($"GET / {version}\r\nHost: test\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            response.StatusLine.ShouldBe("HTTP/1.1 200 OK");
            response.Header("Connection").ShouldBeNull();
            response.BodyText.ShouldBe("Hello, World!");
        }

        protocols.ShouldBe(["HTTP/1.1", "HTTP/1.1"]);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("\r\n")]
    [InlineData("\r\n\r\n\r\n")]
    public async Task Empty_lines_before_the_request_line_are_ignored(string emptyLines)
    {
        await using TestServer host = await StartServerAsync(Hello);
        using RawClient client = host.Connect();
        await client.SendAsync(emptyLines + "GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("Hello, World!");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stray_CRLF_after_a_body_on_a_kept_alive_connection_is_ignored()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            byte[] buffer = new byte[64];
            int total = 0;
            int read;
            while ((read = await context.Request.BodyReader.ReadAsync(buffer.AsMemory(total))) > 0)
            {
                total += read;
            }

            context.Response.Write(context.Request.RawTarget);
            context.Response.Write(buffer.AsSpan(0, total));
        });
        using RawClient client = host.Connect();

        // Some clients end a body with CRLF that Content-Length does not count: in the same write, and in the next one.
        await client.SendAsync("POST /a HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nok\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("/aok");
        await client.SendAsync("POST /b HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nhi");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("/bhi");
        await client.SendAsync("\r\n");
        await client.SendAsync("GET /c HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse last = await client.ReadResponseAsync();
        last.StatusCode.ShouldBe(200);
        last.BodyText.ShouldBe("/c");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Custom_method_is_passed_to_the_application()
    {
        string? method = null;
        await using TestServer host = await StartServerAsync(context =>
        {
            method = context.Request.MethodName;
            context.Request.Method.ShouldBe(KnownMethod.Custom);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("PURGE /cache HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        method.ShouldBe("PURGE");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Client_closing_mid_request_returns_every_block()
    {
        await using TestServer host = await StartServerAsync(Hello);
        using (RawClient client = host.Connect())
        {
            await client.SendAsync("GET /partial HTTP/1.1\r\nHost: te");
        }

        using (RawClient client = host.Connect())
        {
            await client.SendAsync("POST /partial HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\nonly part");
        }

        using RawClient last = host.Connect();
        await last.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await last.ReadResponseAsync()).BodyText.ShouldBe("Hello, World!");
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class ProtocolSemanticsTestsOnLibuv : ProtocolSemanticsTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class ProtocolSemanticsTestsOnIoUring : ProtocolSemanticsTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
