using System;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests;

public sealed class ProtocolSemanticsTests
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
        await using TestServer host = await TestServer.StartAsync(Hello);
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
        await using TestServer host = await TestServer.StartAsync(Hello);
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
        await using TestServer host = await TestServer.StartAsync(Hello);
        using RawClient client = host.Connect();
        for (int i = 0; i < 3; i++)
        {
            await client.SendAsync("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            response.Header("Connection").ShouldBe("keep-alive");
            response.BodyText.ShouldBe("Hello, World!");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Custom_method_is_passed_to_the_application()
    {
        string? method = null;
        await using TestServer host = await TestServer.StartAsync(context =>
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
        await using TestServer host = await TestServer.StartAsync(Hello);
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
