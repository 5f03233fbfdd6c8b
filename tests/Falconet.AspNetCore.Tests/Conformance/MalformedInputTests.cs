using System;
using System.Linq;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Samples.AspNetCore;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Shouldly;

namespace Falconet.AspNetCore.Tests.Conformance;

/// <summary>
/// Inputs that once broke the adapter while the core answered them correctly, sent over a socket to the same application on
/// Kestrel and on Falconet (the derived classes): each must get the same answer on both, or the difference named here.
/// </summary>
public abstract class MalformedInputTests
{
    protected abstract WebServer Server { get; }

    private bool OnKestrel => Server == WebServer.Kestrel;

    private Task<AspNetTestApp> StartAsync(Action<WebApplication> map) => AspNetTestApp.StartAsync(Server, map);

    private static void MapEcho(WebApplication app)
        => app.MapPost("/echo", (Message message) => new Message(message.Text.ToUpperInvariant()));

    /// <summary>The endpoints that read a body: one binds JSON (and swallows the read's exception), one copies the body.</summary>
    private static void MapBodyEndpoints(WebApplication app)
    {
        MapEcho(app);
        app.MapPost("/copy", async (HttpRequest request) =>
        {
            using var copy = new System.IO.MemoryStream();
            await request.Body.CopyToAsync(copy);
            return copy.Length.ToString(System.Globalization.CultureInfo.InvariantCulture);
        });
    }

    /// <summary>
    /// The malformed chunked bodies (the framing broken, a forbidden trailer field, a chunk extension past 4 KiB), each to
    /// an endpoint that binds JSON and to one that copies the body.
    /// </summary>
    public static TheoryData<string, string, string> MalformedChunkedBodies
    {
        get
        {
            var data = new TheoryData<string, string, string>();
            foreach (string path in new[] { "/echo", "/copy" })
            {
                data.Add(path, "bad chunk size", "ZZ\r\n{\"message\":\"a\"}\r\n0\r\n\r\n");
                data.Add(path, "no CRLF after the chunk data", "f\r\n{\"message\":\"a\"}XX0\r\n\r\n");
                data.Add(path, "Content-Length as a trailer", "f\r\n{\"message\":\"a\"}\r\n0\r\nContent-Length: 5\r\n\r\n");
                data.Add(path, "a chunk extension of 5,000 bytes", "f;x=" + new string('a', 5000) + "\r\n{\"message\":\"a\"}\r\n0\r\n\r\n");
            }

            return data;
        }
    }

    /// <summary>
    /// Falconet refuses two inputs Kestrel lets through (and then answers the request): a framing field in the trailers, which
    /// RFC 9110 section 6.5.1 forbids a sender to send and a recipient must not treat as framing, so a request that carries
    /// one is malformed; and a chunk extension past <c>Limits.MaxChunkExtensionSize</c> (4 KiB), which RFC 9112 section
    /// 7.1.1 asks a server to limit with a 4xx. Kestrel skips extensions of any length and accepts any trailer field.
    /// </summary>
    private bool KestrelAccepts(string input) => OnKestrel && input is "Content-Length as a trailer" or "a chunk extension of 5,000 bytes";

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [MemberData(nameof(MalformedChunkedBodies))]
    public async Task A_malformed_chunked_body_is_answered_400_and_the_connection_closes_whatever_the_endpoint_does_with_the_error(
        string path, string input, string body)
    {
        await using AspNetTestApp host = await StartAsync(MapBodyEndpoints);
        using RawClient client = host.Connect();
        await client.SendAsync($"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + body);
        RawResponse response = await client.ReadResponseAsync();
        if (KestrelAccepts(input))
        {
            response.StatusCode.ShouldBe(200);
            response.BodyText.ShouldBe(path == "/echo" ? "{\"message\":\"A\"}" : "15");
            return;
        }

        response.StatusCode.ShouldBe(400, input);
        response.Body.ShouldBeEmpty();
        (await client.IsClosedByServerAsync()).ShouldBeTrue();

        // The client's fault, logged as such (at Debug): never as an application error, which any client could flood the log
        // with. Kestrel logs the exception that reaches it from the copying endpoint as an unhandled application error.
        if (!OnKestrel)
        {
            host.Logs.Entries.ShouldNotContain(e => e.Level >= Microsoft.Extensions.Logging.LogLevel.Warning);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task OPTIONS_asterisk_is_answered_404_by_routing_without_an_error()
    {
        await using AspNetTestApp host = await StartAsync(MapEcho);
        using RawClient client = host.Connect();
        await client.SendAsync("OPTIONS * HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(404);
        await client.SendAsync("OPTIONS * HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(404);
        host.Logs.Entries.ShouldNotContain(e => e.Level >= Microsoft.Extensions.Logging.LogLevel.Warning);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task CONNECT_is_answered_404_by_Kestrel_and_501_with_a_close_by_Falconet()
    {
        // Falconet makes no tunnels and says so for any target (RFC 9110 section 15.6.2), and closes: bytes a client sends
        // after its CONNECT (a TLS ClientHello) must never be read as a request (docs/http-server.md, "CONNECT"). Kestrel
        // passes CONNECT to the application with an empty path, which no route matches.
        await using AspNetTestApp host = await StartAsync(MapEcho);
        using RawClient client = host.Connect();
        await client.SendAsync("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(OnKestrel ? 404 : 501);
        if (!OnKestrel)
        {
            response.Header("Connection").ShouldBe("close");
            (await client.IsClosedByServerAsync()).ShouldBeTrue();
        }
    }
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_handler_that_flushes_then_throws_without_going_asynchronous_sends_the_flushed_bytes_then_ends_the_connection()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/fail", (HttpResponse response) =>
        {
            response.Body.WriteAsync("partial"u8.ToArray()).AsTask().GetAwaiter().GetResult();
            response.Body.FlushAsync().GetAwaiter().GetResult();
            throw new InvalidOperationException("after a flush");
        }));

        using RawClient client = host.Connect();
        await client.SendAsync("GET /fail HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse head = await client.ReadHeadAsync();
        head.StatusCode.ShouldBe(200);
        head.Chunked.ShouldBeTrue();
        (await client.ReadChunkAsync()).ShouldBe("partial"u8.ToArray());

        // The end of the stream where the last chunk would be: the client sees the response cut short.
        (await client.ReceiveEndAsync()).ShouldBe(0);
        await WaitUntilAsync(() => host.Logs.Entries.Any(e => e.Exception?.Message == "after a flush"));
    }

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        for (int i = 0; i < 400 && !condition(); i++)
        {
            await Task.Delay(25);
        }

        condition().ShouldBeTrue();
    }
}

public sealed class MalformedInputTestsOnKestrel : MalformedInputTests
{
    protected override WebServer Server => WebServer.Kestrel;
}

public sealed class MalformedInputTestsOnFalconetSockets : MalformedInputTests
{
    protected override WebServer Server => WebServer.FalconetSockets;
}

public sealed class MalformedInputTestsOnFalconetLibuv : MalformedInputTests
{
    protected override WebServer Server => WebServer.FalconetLibuv;
}
