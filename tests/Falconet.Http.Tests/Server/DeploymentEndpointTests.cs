using System;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Shouldly;
using Xunit;

namespace Falconet.Http.Tests.Server;

/// <summary>
/// The endpoints a deployment uses, on each transport: Unix domain sockets (permissions, a stale file, a path that is not a
/// socket, removal at stop), an adopted listening socket, SO_REUSEPORT, and readiness during the drain.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public class DeploymentEndpointTests : ServerTests
{
    [Fact]
    public async Task A_Unix_domain_socket_endpoint_serves_with_the_configured_permissions_and_its_file_goes_at_stop()
    {
        string path = SocketPath();
        TestServer host = await StartServerAsync(Hello, options =>
        {
            options.Endpoints.Add(new UnixDomainSocketEndPoint(path));
            options.UnixSocketPermissions = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.GroupWrite;
        });
        await using (host)
        {
            host.Server.ListeningOn[1].ToString().ShouldBe(path);
            File.GetUnixFileMode(path).ShouldBe(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.GroupWrite);
            using HttpClient client = UnixClient(path);
            (await client.GetStringAsync("http://localhost/")).ShouldBe("hello");
            (await client.GetStringAsync("http://localhost/")).ShouldBe("hello");
        }

        File.Exists(path).ShouldBeFalse();
    }

    [Fact]
    public async Task A_stale_socket_file_is_replaced_and_a_path_that_is_not_a_socket_fails_the_start()
    {
        string stale = SocketPath();
        // A process that ended without removing its socket file (killed) leaves this behind.
        ListenSockets.CloseDescriptor(ListenSockets.Open(new UnixDomainSocketEndPoint(stale), 1, out _));

        File.Exists(stale).ShouldBeTrue();
        await using (TestServer host = await StartServerAsync(Hello, options => options.Endpoints.Add(new UnixDomainSocketEndPoint(stale))))
        {
            using HttpClient client = UnixClient(stale);
            (await client.GetStringAsync("http://localhost/")).ShouldBe("hello");
        }

        string regular = SocketPath();
        await File.WriteAllTextAsync(regular, "not a socket");
        var exception = await Should.ThrowAsync<InvalidOperationException>(() =>
            StartServerAsync(Hello, options => options.Endpoints.Add(new UnixDomainSocketEndPoint(regular))));
        exception.Message.ShouldContain(regular);
        (await File.ReadAllTextAsync(regular)).ShouldBe("not a socket");
        File.Delete(regular);
    }

    [Fact]
    public async Task A_path_another_server_listens_on_fails_the_start_unless_reuse_port_takes_it_over()
    {
        string path = SocketPath();
        TestServer first = await StartServerAsync(Hello, options => options.Endpoints.Add(new UnixDomainSocketEndPoint(path)));
        await using (first)
        {
            await Should.ThrowAsync<InvalidOperationException>(() =>
                StartServerAsync(Hello, options => options.Endpoints.Add(new UnixDomainSocketEndPoint(path))));
            await using TestServer second = await StartServerAsync(context =>
            {
                context.Response.Write("second"u8);
                return default;
            }, options =>
            {
                options.Endpoints.Add(new UnixDomainSocketEndPoint(path));
                options.ReusePort = true;
            });
            using HttpClient client = UnixClient(path);
            (await client.GetStringAsync("http://localhost/")).ShouldBe("second");

            // The first server stops without removing the file the second one owns now.
            await first.Server.StopAsync();
            File.Exists(path).ShouldBeTrue();
            (await client.GetStringAsync("http://localhost/")).ShouldBe("second");
        }
    }

    [Fact]
    public async Task An_adopted_listening_socket_is_served_and_keeps_listening_after_the_server_stops()
    {
        using var listening = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listening.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listening.Listen(16);
        var endpoint = (IPEndPoint)listening.LocalEndPoint!;

        // The server gets its own descriptor of the socket, as a restarted process gets systemd's.
        int fd = Dup((int)listening.Handle);
        await using (TestServer host = await StartServerAsync(Hello, options =>
        {
            options.Endpoints.Clear();
            options.Endpoints.Add(new ListenSocketEndPoint(fd, "http"));
        }))
        {
            host.Server.BoundEndpoints[0].ShouldBe(endpoint);
            using var client = new HttpClient();
            (await client.GetStringAsync($"http://{endpoint}/")).ShouldBe("hello");
        }

        // Stopping closed the server's descriptor only: the socket still queues connections for whoever holds it.
        using var late = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await late.ConnectAsync(endpoint);
        using Socket accepted = await listening.AcceptAsync().WaitAsync(TestTimeouts.Operation);
        accepted.Connected.ShouldBeTrue();
    }

    [Fact]
    public async Task Two_servers_with_reuse_port_listen_on_one_port_and_both_serve()
    {
        await using TestServer first = await StartServerAsync(Hello, options => options.ReusePort = true);
        int port = first.Server.BoundEndpoints[0].Port;
        await using TestServer second = await StartServerAsync(Hello, options =>
        {
            options.ReusePort = true;
            options.Endpoints[0] = new IPEndPoint(IPAddress.Loopback, port);
        });
        second.Server.BoundEndpoints[0].Port.ShouldBe(port);
        await first.Server.StopAsync();
        using var client = new HttpClient();
        (await client.GetStringAsync($"http://127.0.0.1:{port}/")).ShouldBe("hello");
    }

    [Fact]
    public async Task A_stopping_server_turns_unready_first_and_serves_as_usual_during_the_drain_delay()
    {
        int draining = 0;
        TestServer host = await StartServerAsync(Hello, options =>
        {
            options.DrainDelay = TimeSpan.FromSeconds(1);
            options.Draining = () => Interlocked.Increment(ref draining);
        });
        await using (host)
        {
            host.Server.IsReady.ShouldBeTrue();
            using RawClient client = host.Connect();
            var elapsed = System.Diagnostics.Stopwatch.StartNew();
            Task stop = host.Server.StopAsync();
            host.Server.IsReady.ShouldBeFalse();
            draining.ShouldBe(1);

            // Kept alive, and new connections are still accepted, until the delay is over.
            await client.SendAsync("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            response.BodyText.ShouldBe("hello");
            response.Header("Connection").ShouldBeNull();
            using RawClient late = host.Connect();
            await late.SendAsync("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
            (await late.ReadResponseAsync()).BodyText.ShouldBe("hello");
            stop.IsCompleted.ShouldBeFalse($"{elapsed.ElapsedMilliseconds} ms after the stop began");
            await stop.WaitAsync(TestTimeouts.Operation);
        }
    }

    [Fact]
    public async Task A_request_on_a_connection_idle_when_the_drain_begins_is_answered_with_connection_close()
    {
        TestServer host = await StartServerAsync(Hello, options => options.DrainIdleTimeout = TimeSpan.FromSeconds(3));
        await using (host)
        {
            using RawClient client = host.Connect();
            await client.SendAsync("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("hello");
            Task stop = host.Server.StopAsync();
            await Task.Delay(300);

            // The client sends on its idle connection after the drain began: answered, not closed under it.
            await client.SendAsync("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
            RawResponse response = await client.ReadResponseAsync();
            response.BodyText.ShouldBe("hello");
            response.Header("Connection").ShouldBe("close");
            (await client.IsClosedByServerAsync()).ShouldBeTrue();
            await stop.WaitAsync(TestTimeouts.Operation);
        }
    }

    private static ValueTask Hello(HttpContext context)
    {
        context.Response.Write("hello"u8);
        return default;
    }

    private static string SocketPath() => Path.Combine(Path.GetTempPath(), $"falconet-{Guid.NewGuid():N}.sock");

    private static HttpClient UnixClient(string path) => new(new SocketsHttpHandler
    {
        ConnectCallback = async (_, cancellationToken) =>
        {
            var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            await socket.ConnectAsync(new UnixDomainSocketEndPoint(path), cancellationToken);
            return new NetworkStream(socket, ownsSocket: true);
        },
    })
    { Timeout = TestTimeouts.Operation };

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "dup")]
    private static extern int Dup(int fd);
}

[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class DeploymentEndpointTestsOnLibuv : DeploymentEndpointTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class DeploymentEndpointTestsOnIoUring : DeploymentEndpointTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
