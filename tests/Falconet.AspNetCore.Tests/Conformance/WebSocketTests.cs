using System;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Samples.AspNetCore;
using Falconet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Shouldly;

namespace Falconet.AspNetCore.Tests.Conformance;

/// <summary>
/// WebSockets through ASP.NET Core's middleware (app.UseWebSockets) with .NET's ClientWebSocket, on Kestrel and on Falconet
/// (the derived classes), over ws:// and wss://: echo, the close handshake from either side, a large message, a client that
/// aborts, and a plain request to the WebSocket endpoint.
/// </summary>
public abstract class WebSocketTests
{
    protected abstract WebServer Server { get; }

    protected virtual bool Secure => false;

    private async Task<AspNetTestApp> StartAsync(Action<WebApplication>? map = null)
    {
        return await AspNetTestApp.StartAsync(Server, app =>
        {
            app.UseWebSockets();
            app.Map("/ws", SampleApp.EchoWebSocketAsync);
            map?.Invoke(app);
        }, builder => AspNetTestApp.UseTestCertificate(builder, Server), Secure ? ["--urls", "https://127.0.0.1:0"] : null);
    }

    private async Task<ClientWebSocket> ConnectAsync(AspNetTestApp host, string path = "ws")
    {
        var socket = new ClientWebSocket();
        socket.Options.CollectHttpResponseDetails = true;
        socket.Options.RemoteCertificateValidationCallback = (_, certificate, _, _) =>
            certificate?.GetCertHashString() == TestCertificates.Server.Thumbprint;
        var uri = new UriBuilder(new Uri(host.BaseAddress, path)) { Scheme = Secure ? "wss" : "ws" }.Uri;
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        await socket.ConnectAsync(uri, timeout.Token);
        return socket;
    }

    private static async Task<(WebSocketMessageType Type, byte[] Data)> ReceiveMessageAsync(WebSocket socket)
    {
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        using var message = new System.IO.MemoryStream();
        byte[] buffer = new byte[8192];
        while (true)
        {
            WebSocketReceiveResult received = await socket.ReceiveAsync(buffer, timeout.Token);
            message.Write(buffer, 0, received.Count);
            if (received.EndOfMessage)
            {
                return (received.MessageType, message.ToArray());
            }
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Text_and_binary_messages_are_echoed_and_the_client_closes_with_the_handshake()
    {
        await using AspNetTestApp host = await StartAsync();
        using ClientWebSocket socket = await ConnectAsync(host);
        socket.HttpStatusCode.ShouldBe(HttpStatusCode.SwitchingProtocols);

        await socket.SendAsync(Encoding.UTF8.GetBytes("hello, wörld"), WebSocketMessageType.Text, true, CancellationToken.None);
        (WebSocketMessageType type, byte[] data) = await ReceiveMessageAsync(socket);
        type.ShouldBe(WebSocketMessageType.Text);
        Encoding.UTF8.GetString(data).ShouldBe("hello, wörld");

        await socket.SendAsync(new byte[] { 0, 1, 2, 255 }, WebSocketMessageType.Binary, true, CancellationToken.None);
        (await ReceiveMessageAsync(socket)).Data.ShouldBe(new byte[] { 0, 1, 2, 255 });

        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "bye", timeout.Token);
        socket.State.ShouldBe(WebSocketState.Closed);
        socket.CloseStatus.ShouldBe(WebSocketCloseStatus.NormalClosure);
        socket.CloseStatusDescription.ShouldBe("bye");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_message_of_a_megabyte_in_many_frames_comes_back_whole()
    {
        await using AspNetTestApp host = await StartAsync();
        using ClientWebSocket socket = await ConnectAsync(host);
        byte[] message = RandomNumberGenerator.GetBytes(1024 * 1024 + 3);

        // Sent while the echo comes back: neither side may wait for the other to finish.
        Task<(WebSocketMessageType Type, byte[] Data)> receiving = ReceiveMessageAsync(socket);
        for (int offset = 0; offset < message.Length; offset += 60_000)
        {
            int count = Math.Min(60_000, message.Length - offset);
            await socket.SendAsync(message.AsMemory(offset, count), WebSocketMessageType.Binary, offset + count == message.Length, CancellationToken.None);
        }

        (await receiving).Data.ShouldBe(message);
        await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, null, CancellationToken.None);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_server_closes_with_the_handshake_and_the_client_sees_its_status()
    {
        await using AspNetTestApp host = await StartAsync(app => app.Map("/closing", async (HttpContext context) =>
        {
            using WebSocket server = await context.WebSockets.AcceptWebSocketAsync();
            await server.CloseOutputAsync(WebSocketCloseStatus.PolicyViolation, "server says no", CancellationToken.None);
            await server.ReceiveAsync(new byte[16], CancellationToken.None);
        }));
        using ClientWebSocket socket = await ConnectAsync(host, "closing");
        WebSocketReceiveResult received = await socket.ReceiveAsync(new byte[16], CancellationToken.None);
        received.MessageType.ShouldBe(WebSocketMessageType.Close);
        socket.CloseStatus.ShouldBe(WebSocketCloseStatus.PolicyViolation);
        socket.CloseStatusDescription.ShouldBe("server says no");
        await socket.CloseOutputAsync(WebSocketCloseStatus.PolicyViolation, null, CancellationToken.None);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_that_aborts_ends_the_server_side_without_an_error_and_the_connection_is_released()
    {
        var ended = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        var accepted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using AspNetTestApp host = await StartAsync(app => app.Map("/watch", async (HttpContext context) =>
        {
            using WebSocket server = await context.WebSockets.AcceptWebSocketAsync();
            accepted.TrySetResult();
            try
            {
                await server.ReceiveAsync(new byte[16], CancellationToken.None);
                ended.TrySetResult("returned " + server.State);
            }
            catch (WebSocketException exception)
            {
                ended.TrySetResult(exception.WebSocketErrorCode.ToString());
            }
        }));

        ClientWebSocket socket = await ConnectAsync(host, "watch");
        await accepted.Task.WaitAsync(TestTimeouts.Operation);
        socket.Abort();
        socket.Dispose();

        (await ended.Task.WaitAsync(TestTimeouts.Operation)).ShouldBe(nameof(WebSocketError.ConnectionClosedPrematurely));
        if (host.WebServer is FalconetWebServer falconet)
        {
            for (int i = 0; i < 200 && falconet.Server!.ConnectionCount != 0; i++)
            {
                await Task.Delay(25);
            }

            falconet.Server!.ConnectionCount.ShouldBe(0);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_plain_request_to_the_WebSocket_endpoint_is_an_ordinary_request()
    {
        await using AspNetTestApp host = await StartAsync();
        using HttpResponseMessage response = await host.Http.GetAsync("ws");
        response.StatusCode.ShouldBe(HttpStatusCode.BadRequest);
        (await host.Http.GetAsync("ws")).StatusCode.ShouldBe(HttpStatusCode.BadRequest);
    }
}

public sealed class WebSocketTestsOnKestrel : WebSocketTests
{
    protected override WebServer Server => WebServer.Kestrel;
}

public sealed class WebSocketTestsOnFalconetSockets : WebSocketTests
{
    protected override WebServer Server => WebServer.FalconetSockets;
}

public sealed class WebSocketTestsOnFalconetLibuv : WebSocketTests
{
    protected override WebServer Server => WebServer.FalconetLibuv;
}

public sealed class WebSocketTestsOverTlsOnKestrel : WebSocketTests
{
    protected override WebServer Server => WebServer.Kestrel;

    protected override bool Secure => true;
}

public sealed class WebSocketTestsOverTlsOnFalconetLibuv : WebSocketTests
{
    protected override WebServer Server => WebServer.FalconetLibuv;

    protected override bool Secure => true;
}

public sealed class WebSocketTestsOverTlsOnFalconetSockets : WebSocketTests
{
    protected override WebServer Server => WebServer.FalconetSockets;

    protected override bool Secure => true;
}
