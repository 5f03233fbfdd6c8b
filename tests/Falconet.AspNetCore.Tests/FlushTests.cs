using System;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Samples.AspNetCore;
using Falconet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Shouldly;

namespace Falconet.AspNetCore.Tests;

/// <summary>
/// Minimal-API results flush at the end of every response; those flushes leave with the connection's one send per read
/// batch, while a streaming endpoint's flushes still reach a client that waits for them (sockets, and libuv below).
/// </summary>
public class FlushTests
{
    protected virtual TransportKind Transport => TransportKind.Sockets;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Pipelined_minimal_api_responses_leave_in_one_send_per_read_batch()
    {
        await using CountingTransportFactory counting = CountingTransportFactory.Over(Transport);
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(Transport, app =>
        {
            app.MapGet("/plaintext", () => "Hello, World!");
            app.MapGet("/json", () => new Message("Hello, World!"));
        }, builder => builder.WebHost.ConfigureFalconet(options => options.TransportFactory = counting));

        using RawClient client = host.Connect();
        await client.SendAsync(string.Concat(Enumerable.Range(0, 16).Select(i =>
            $"GET /{(i % 2 == 0 ? "plaintext" : "json")} HTTP/1.1\r\nHost: test\r\n\r\n")));
        for (int i = 0; i < 16; i++)
        {
            RawResponse response = await client.ReadResponseAsync();
            response.StatusCode.ShouldBe(200);
            response.BodyText.ShouldBe(i % 2 == 0 ? "Hello, World!" : "{\"message\":\"Hello, World!\"}");
        }

        // Each result flushes: sent at once, that was a send per response and one more for the batch's last chunk.
        CountingConnection connection = counting.Connections.ShouldHaveSingleItem();
        connection.Sends.ShouldBe(connection.DataReceives);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_streaming_endpoint_flushes_reach_the_client_before_the_response_ends(bool requestPipelinedBehind)
    {
        var firstRead = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var secondRead = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(Transport, app =>
        {
            app.MapGet("/next", () => "next");
            app.MapGet("/stream", async (HttpContext context) =>
            {
                // Each WriteAsync flushes: the first before the endpoint ever waits, the others after.
                await context.Response.WriteAsync("first");
                await firstRead.Task;
                await context.Response.WriteAsync("second");
                await secondRead.Task;
                await context.Response.WriteAsync("third");
            });
        });

        using RawClient client = host.Connect();
        await StreamingTranscript.ReadAsync(client, requestPipelinedBehind, firstRead, secondRead);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class FlushTestsOnLibuv : FlushTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class FlushTestsOnIoUring : FlushTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
