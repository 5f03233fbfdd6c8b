using System;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;
using Xunit;

namespace Falconet.Http.Tests.Deployment;

/// <summary>
/// The sample behind real load balancers, started by the tests: HAProxy (PROXY protocol v2, HTTP health checks on /health)
/// and nginx (PROXY protocol from its stream module; HTTP with upstream keep-alive over Unix sockets). Each balancer keeps
/// its default retry settings. A test is SKIPPED when the balancer is not installed; CI installs both (.ci/run).
/// </summary>
[Collection(LoadBalancerCollection.Name)]
public sealed class LoadBalancerTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("falconet-lb-").FullName;

    public LoadBalancerTests()
    {
        // nginx's workers run as an unprivileged user: they must reach the Unix sockets in here.
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(_directory, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute
                | UnixFileMode.GroupRead | UnixFileMode.GroupExecute | UnixFileMode.OtherRead | UnixFileMode.OtherExecute);
        }
    }

    [SkippableFact]
    public async Task HAProxy_with_send_proxy_v2_and_health_checks_hands_the_app_the_clients_own_address()
    {
        string haproxy = Require("haproxy");
        using SampleBackend a = await SampleBackend.StartAsync("--proxy-protocol", "--trusted-proxy", "127.0.0.0/8");
        using SampleBackend b = await SampleBackend.StartAsync("--proxy-protocol", "--trusted-proxy", "127.0.0.0/8");
        (ExternalProcess lb, IPEndPoint front) = StartHaproxy(haproxy, a.Port, b.Port);
        using (lb)
        {
            await WaitUntilUpAsync(lb, front, "a", "b");
            for (int i = 0; i < 4; i++)
            {
                // Round robin: both backends answer in turn, each with the address the client connected from.
                (string body, IPEndPoint client) = await GetClientAddressAsync(front);
                body.ShouldBe($"127.0.0.1:{client.Port}", lb.Output);
            }
        }
    }

    [SkippableFact]
    public async Task A_rolling_restart_behind_HAProxy_with_its_default_retries_loses_no_request()
    {
        string haproxy = Require("haproxy");
        string[] arguments = Environment.GetEnvironmentVariable("FALCONET_DRAIN_EXPERIMENT") is { } experiment
            ? ["--proxy-protocol", "--trusted-proxy", "127.0.0.0/8", "--shutdown-timeout", "5", .. experiment.Split(' ')]
            : ["--proxy-protocol", "--trusted-proxy", "127.0.0.0/8", "--drain-delay", "1", "--shutdown-timeout", "5"];
        using SampleBackend a = await SampleBackend.StartAsync(arguments);
        using SampleBackend b = await SampleBackend.StartAsync(arguments);
        (ExternalProcess lb, IPEndPoint front) = StartHaproxy(haproxy, a.Port, b.Port);
        using (lb)
        {
            await WaitUntilUpAsync(lb, front, "a", "b");
            await RollingRestartUnderLoadAsync(front, lb, async () =>
            {
                await a.RestartAsync();
                await WaitUntilUpAsync(lb, front, "a");
                await b.RestartAsync();
                await WaitUntilUpAsync(lb, front, "b");
            });
        }
    }

    [SkippableFact]
    public async Task Nginx_stream_with_proxy_protocol_hands_the_app_the_clients_own_address()
    {
        string nginx = Require("nginx");
        Skip.IfNot(File.Exists(StreamModule), $"nginx's stream module is not installed ({StreamModule}: Debian package libnginx-mod-stream; CI installs it)");
        using SampleBackend a = await SampleBackend.StartAsync("--proxy-protocol", "--trusted-proxy", "127.0.0.0/8");
        int port = ExternalProcess.FreePort();
        string config = $$"""
            load_module {{StreamModule}};
            {{NginxGlobals()}}
            stream {
                upstream backend { server 127.0.0.1:{{a.Port}}; }
                server { listen 127.0.0.1:{{port}}; proxy_pass backend; proxy_protocol on; }
            }
            """;
        using ExternalProcess lb = StartNginx(nginx, config);
        var front = new IPEndPoint(IPAddress.Loopback, port);
        await ExternalProcess.WaitUntilServingAsync(front, "/plaintext", lb);
        (string body, IPEndPoint client) = await GetClientAddressAsync(front);
        body.ShouldBe($"127.0.0.1:{client.Port}", lb.Output);
    }

    /// <remarks>
    /// nginx (open source) has no active health checks: one refused connect marks a backend failed for <c>fail_timeout</c>
    /// (10 s), and a second backend failing within it leaves "no live upstreams" (502). So each backend is restarted the way a
    /// Unix socket allows without a refused connect: the new process takes the socket path over atomically, then the old one
    /// gets SIGTERM and drains.
    /// </remarks>
    [SkippableFact]
    public async Task A_rolling_restart_behind_nginx_with_upstream_keep_alive_over_unix_sockets_loses_no_request()
    {
        string nginx = Require("nginx");
        string socketA = Path.Combine(_directory, "a.sock");
        string socketB = Path.Combine(_directory, "b.sock");
        using SampleBackend a = await SampleBackend.StartAsync("--unix-socket", socketA, "--reuseport", "--drain-delay", "1", "--shutdown-timeout", "5");
        using SampleBackend b = await SampleBackend.StartAsync("--unix-socket", socketB, "--reuseport", "--drain-delay", "1", "--shutdown-timeout", "5");
        int port = ExternalProcess.FreePort();
        string config = $$"""
            {{NginxGlobals()}}
            http {
                access_log off;
                client_body_temp_path {{_directory}}/body;
                proxy_temp_path {{_directory}}/proxy;
                fastcgi_temp_path {{_directory}}/fastcgi;
                uwsgi_temp_path {{_directory}}/uwsgi;
                scgi_temp_path {{_directory}}/scgi;
                upstream backend {
                    server unix:{{socketA}};
                    server unix:{{socketB}};
                    keepalive 16;
                }
                server {
                    listen 127.0.0.1:{{port}};
                    location / {
                        proxy_pass http://backend;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                    }
                }
            }
            """;
        using ExternalProcess lb = StartNginx(nginx, config);
        var front = new IPEndPoint(IPAddress.Loopback, port);
        await ExternalProcess.WaitUntilServingAsync(front, "/plaintext", lb);
        await RollingRestartUnderLoadAsync(front, lb, async () =>
        {
            await a.ReplaceAsync();
            await b.ReplaceAsync();
        });
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private const string StreamModule = "/usr/lib/nginx/modules/ngx_stream_module.so";

    /// <summary>
    /// Eight keep-alive connections at a steady rate through <paramref name="front"/> while <paramref name="restart"/> restarts
    /// the backends: not one request may fail or meet a reset, and every response is the sample's, byte for byte.
    /// </summary>
    internal static async Task RollingRestartUnderLoadAsync(EndPoint front, ExternalProcess? lb, Func<Task> restart)
    {
        var load = new SteadyLoad(front, connections: 8, interval: TimeSpan.FromMilliseconds(4), maxRequests: 100_000);
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(45));
        Task running = load.RunAsync(stop.Token);
        await Task.Delay(300);
        long before = load.Completed;
        await restart();

        // The restarted processes serve the load too before it stops.
        long restarted = load.Completed;
        using (var settle = new CancellationTokenSource(TimeSpan.FromSeconds(10)))
        {
            while (load.Completed < restarted + 400 && !settle.IsCancellationRequested && !running.IsCompleted)
            {
                await Task.Delay(20);
            }
        }

        await stop.CancelAsync();
        await running;
        string context = $"{load.Completed} completed ({before} before the restarts, {restarted} when they ended), {load.Failed} failed, {load.Connects} connections:{Environment.NewLine}{load.FailureReport}{Environment.NewLine}{lb?.Output}";
        load.Failed.ShouldBe(0, context);
        load.Resets.ShouldBe(0, context);
        (load.Completed - restarted).ShouldBeGreaterThanOrEqualTo(400, context);
    }

    private static string Require(string program)
    {
        string? path = ExternalProcess.Find(program);
        Skip.If(path is null, $"{program} is not installed here (CI installs it: .ci/run)");
        return path!;
    }

    private (ExternalProcess Process, IPEndPoint Front) StartHaproxy(string haproxy, int portA, int portB)
    {
        int port = ExternalProcess.FreePort();
        string stats = Path.Combine(_directory, "haproxy.sock");
        // Health checks every 100 ms (down after 2 failures, up after 2 passes): the backends' drain delay of 1 s covers them.
        // Retries are HAProxy's defaults (3 connection attempts, no redispatch, no retry of a request once sent).
        string config = $"""
            global
                stats socket {stats} mode 600 level admin
            defaults
                mode http
                timeout connect 2s
                timeout client 30s
                timeout server 30s
            frontend front
                bind 127.0.0.1:{port}
                default_backend samples
            backend samples
                balance roundrobin
                option httpchk GET /health
                default-server inter 100ms fall 2 rise 2 send-proxy-v2 check-send-proxy
                server a 127.0.0.1:{portA} check
                server b 127.0.0.1:{portB} check
            """;
        string file = Path.Combine(_directory, "haproxy.cfg");
        File.WriteAllText(file, config + "\n");
        ExternalProcess process = ExternalProcess.Start(haproxy, ["-db", "-f", file]);
        return (process, new IPEndPoint(IPAddress.Loopback, port));
    }

    /// <summary>Waits until HAProxy's stats socket says every one of <paramref name="servers"/> is UP.</summary>
    private async Task WaitUntilUpAsync(ExternalProcess lb, IPEndPoint front, params string[] servers)
    {
        await ExternalProcess.WaitUntilServingAsync(front, "/plaintext", lb);
        using var deadline = new CancellationTokenSource(TestTimeouts.Operation);
        while (true)
        {
            string stat = await HaproxyCommandAsync("show stat");
            if (Array.TrueForAll(servers, server => stat.Contains($"\nsamples,{server},", StringComparison.Ordinal)
                && stat.Split('\n').Any(line => line.StartsWith($"samples,{server},", StringComparison.Ordinal) && line.Split(',')[17] == "UP")))
            {
                return;
            }

            deadline.IsCancellationRequested.ShouldBeFalse($"HAProxy did not see {string.Join(", ", servers)} up: {stat} {lb.Output}");
            await Task.Delay(50);
        }
    }

    private async Task<string> HaproxyCommandAsync(string command)
    {
        using var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            await socket.ConnectAsync(new UnixDomainSocketEndPoint(Path.Combine(_directory, "haproxy.sock")));
        }
        catch (SocketException)
        {
            return string.Empty;
        }

        await socket.SendAsync(Encoding.ASCII.GetBytes(command + "\n"), SocketFlags.None);
        var output = new StringBuilder();
        byte[] buffer = new byte[8192];
        int received;
        while ((received = await socket.ReceiveAsync(buffer, SocketFlags.None)) > 0)
        {
            output.Append(Encoding.ASCII.GetString(buffer, 0, received));
        }

        return output.ToString();
    }

    private string NginxGlobals() => $$"""
        daemon off;
        worker_processes 1;
        pid {{_directory}}/nginx.pid;
        error_log stderr warn;
        events { worker_connections 1024; }
        """;

    private ExternalProcess StartNginx(string nginx, string config)
    {
        string file = Path.Combine(_directory, "nginx.conf");
        File.WriteAllText(file, config);
        return ExternalProcess.Start(nginx, ["-p", _directory, "-c", file, "-e", "stderr"]);
    }

    /// <summary>GET /client through <paramref name="front"/>: the address the app saw, and the client's own local endpoint.</summary>
    private static async Task<(string Body, IPEndPoint Client)> GetClientAddressAsync(IPEndPoint front)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(front);
        var client = (IPEndPoint)socket.LocalEndPoint!;
        await socket.SendAsync("GET /client HTTP/1.1\r\nHost: falconet\r\nConnection: close\r\n\r\n"u8.ToArray(), SocketFlags.None);
        var response = new MemoryStream();
        byte[] buffer = new byte[4096];
        int received;
        using var timeout = new CancellationTokenSource(TestTimeouts.Operation);
        while ((received = await socket.ReceiveAsync(buffer, SocketFlags.None, timeout.Token)) > 0)
        {
            response.Write(buffer, 0, received);
        }

        string text = Encoding.ASCII.GetString(response.ToArray());
        text.ShouldStartWith("HTTP/1.1 200");
        return (text[(text.IndexOf("\r\n\r\n", StringComparison.Ordinal) + 4)..], client);
    }
}

/// <summary>The deadline-sensitive deployment tests run one at a time (each runs several processes under load).</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class LoadBalancerCollection
{
    public const string Name = "Load balancers";
}
