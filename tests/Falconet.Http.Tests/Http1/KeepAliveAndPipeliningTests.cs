using System;
using System.Net;
using System.Net.Http;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

public class KeepAliveAndPipeliningTests : ServerTests
{
    private static ValueTask EchoPath(HttpContext context)
    {
        context.Response.Headers.ContentType = "text/plain";
        context.Response.Write(context.Request.RawTarget);
        context.Response.Write(Encoding.ASCII.GetBytes($" connection={context.ConnectionId}"));
        return default;
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Many_requests_share_one_connection_when_keep_alive_is_the_default()
    {
        await using TestServer host = await StartServerAsync(EchoPath);
        using RawClient client = host.Connect();
        string? firstConnection = null;
        for (int i = 0; i < 50; i++)
        {
            await client.SendAsync($"GET /r{i} HTTP/1.1\r\nHost: test\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            response.StatusCode.ShouldBe(200);
            response.Header("Connection").ShouldBeNull();
            string[] parts = response.BodyText.Split(' ');
            parts[0].ShouldBe($"/r{i}");
            firstConnection ??= parts[1];
            parts[1].ShouldBe(firstConnection);
        }

        host.Server.RequestCount.ShouldBe(50);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task HttpClient_reuses_the_connection_for_sequential_requests()
    {
        await using TestServer host = await StartServerAsync(EchoPath);
        using HttpClient http = host.CreateHttpClient(new SocketsHttpHandler { MaxConnectionsPerServer = 1 });
        string? connection = null;
        for (int i = 0; i < 20; i++)
        {
            using HttpResponseMessage response = await http.GetAsync($"/item?i={i}");
            response.StatusCode.ShouldBe(HttpStatusCode.OK);
            response.Headers.Server.ToString().ShouldBe("Falconet");
            response.Headers.Date.ShouldNotBeNull();
            string[] parts = (await response.Content.ReadAsStringAsync()).Split(' ');
            parts[0].ShouldBe($"/item?i={i}");
            connection ??= parts[1];
            parts[1].ShouldBe(connection);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Sixteen_pipelined_requests_in_one_write_are_answered_in_order()
    {
        await using TestServer host = await StartServerAsync(EchoPath);
        using RawClient client = host.Connect();
        var batch = new StringBuilder();
        for (int i = 0; i < 16; i++)
        {
            batch.Append("GET /p").Append(i).Append(" HTTP/1.1\r\nHost: test\r\n\r\n");
        }

        await client.SendAsync(batch.ToString());
        for (int i = 0; i < 16; i++)
        {
            RawResponse response = await client.ReadResponseAsync();
            response.StatusCode.ShouldBe(200);
            response.BodyText.ShouldStartWith($"/p{i} ");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Request_split_byte_by_byte_is_parsed_once_complete()
    {
        await using TestServer host = await StartServerAsync(EchoPath);
        using RawClient client = host.Connect();
        byte[] request = Encoding.ASCII.GetBytes("GET /slow?x=1 HTTP/1.1\r\nHost: test\r\nAccept: */*\r\n\r\n");
        for (int i = 0; i < request.Length; i++)
        {
            await client.SendAsync(request.AsMemory(i, 1));
            await Task.Delay(1);
        }

        RawResponse response = await client.ReadResponseAsync();
        response.BodyText.ShouldStartWith("/slow?x=1 ");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Connection_close_from_the_client_closes_after_the_response()
    {
        await using TestServer host = await StartServerAsync(EchoPath);
        using RawClient client = host.Connect();
        await client.SendAsync("GET /bye HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.Header("Connection").ShouldBe("close");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("HTTP/1.1", "close", false)]
    [InlineData("HTTP/1.1", "Close", false)]
    [InlineData("HTTP/1.1", "keep-alive, close", false)]
    [InlineData("HTTP/1.1", "keep-alive", true)]
    [InlineData("HTTP/1.1", "Upgrade", true)]
    [InlineData("HTTP/1.1", null, true)]
    [InlineData("HTTP/1.0", "keep-alive", true)]
    [InlineData("HTTP/1.0", "Keep-Alive", true)]
    [InlineData("HTTP/1.0", " keep-alive ,x", true)]
    [InlineData("HTTP/1.0", "close", false)]
    [InlineData("HTTP/1.0", null, false)]
    public async Task Connection_header_decides_whether_the_connection_stays_open(string version, string? connection, bool stays)
    {
        // Known values arrive as the header set's shared instances and are decided without a scan; the others are scanned.
        await using TestServer host = await StartServerAsync(EchoPath);
        using RawClient client = host.Connect();
        string request = $"GET /first {version}\r\nHost: test\r\n" + (connection is null ? string.Empty : $"Connection: {connection}\r\n") + "\r\n";
        await client.SendAsync(request + request.Replace("/first", "/second", StringComparison.Ordinal));

        RawResponse first = await client.ReadResponseAsync();
        first.BodyText.ShouldStartWith("/first");
        if (stays)
        {
            (await client.ReadResponseAsync()).BodyText.ShouldStartWith("/second");
        }
        else
        {
            first.Header("Connection").ShouldBe("close");
            (await client.IsClosedByServerAsync()).ShouldBeTrue();
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Connection_close_set_by_the_application_closes_after_the_response()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Headers.Connection = "close";
            context.Response.Write("done"u8);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\nGET /never HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.BodyText.ShouldBe("done");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        host.Server.RequestCount.ShouldBe(1);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Path_and_query_are_exposed_as_bytes_and_cached_strings()
    {
        string? path = null;
        string? query = null;
        bool samePathInstance = false;
        string? protocol = null;
        await using TestServer host = await StartServerAsync(context =>
        {
            path = context.Request.Path;
            query = context.Request.Query;
            samePathInstance = ReferenceEquals(path, context.Request.Path);
            protocol = context.Request.Protocol;
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET http://example.test:81/a/b%20c?x=1&y=2 HTTP/1.1\r\nHost: example.test\r\n\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        path.ShouldBe("/a/b%20c");
        query.ShouldBe("x=1&y=2");
        samePathInstance.ShouldBeTrue();
        protocol.ShouldBe("HTTP/1.1");

        await client.SendAsync("OPTIONS * HTTP/1.1\r\nHost: example.test\r\n\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        path.ShouldBe("*");
        query.ShouldBe(string.Empty);
        await client.SendAsync("GET http://example.test?q HTTP/1.1\r\nHost: example.test\r\n\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        path.ShouldBe("/");
        query.ShouldBe("q");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Idle_keep_alive_connection_holds_no_receive_block_over_plain_http()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            await BodyHashing.EchoHashWithReader(context);
            context.Response.Write(new byte[20_000]);
        });
        using RawClient client = host.Connect();
        await client.SendAsync($"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 9000\r\n\r\n{new string('b', 9000)}");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);

        // The connection waits for the next request without a block (it takes one once bytes are at hand). Over TLS it keeps
        // its block, and the TLS layer waits with a second one: it receives the next record into it.
        long expected = host.IsHttps ? 2 : 0;
        long outstanding = -1;
        for (int attempt = 0; attempt < 200 && outstanding != expected; attempt++)
        {
            await Task.Delay(10);
            outstanding = host.Server.BlocksOutstanding;
        }

        outstanding.ShouldBe(expected);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Pipelined_requests_for_large_responses_keep_buffered_output_within_the_write_behind_bound()
    {
        const int Requests = 64;
        const int BodySize = 16 * 1024;
        const long Limit = 64 * 1024;
        byte[] body = BodyHashing.RandomBytes(BodySize, 5);
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write(body);
            return default;
        });

        // All requests in one write, so they arrive in one read; the client's small receive buffer fills fast.
        var batch = new StringBuilder();
        for (int i = 0; i < Requests; i++)
        {
            batch.Append("GET /p HTTP/1.1\r\nHost: t\r\n\r\n");
        }

        using (RawClient client = host.Connect(receiveBufferSize: 16 * 1024))
        {
            await client.SendAsync(batch.ToString());
            for (int i = 0; i < Requests; i++)
            {
                RawResponse response = await client.ReadResponseAsync();
                response.StatusCode.ShouldBe(200);
                response.Body.ShouldBe(body);
            }
        }

        await host.Server.StopAsync().WaitAsync(TestTimeouts.Operation);

        // About the bound plus one response (and a block of rounding), not 64 responses (1 MiB).
        host.Server.PeakConnectionOutputBuffered.ShouldBeGreaterThanOrEqualTo(Limit);
        host.Server.PeakConnectionOutputBuffered.ShouldBeLessThanOrEqualTo(Limit + BodySize + 4096);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class KeepAliveAndPipeliningTestsOnLibuv : KeepAliveAndPipeliningTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class KeepAliveAndPipeliningTestsOnIoUring : KeepAliveAndPipeliningTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
