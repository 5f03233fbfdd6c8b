using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Shouldly;

namespace Falconet.Http.Tests.Deployment;

/// <summary>A program the deployment tests run beside the sample (haproxy, nginx, systemd-socket-activate), with its output kept for the failure message.</summary>
internal sealed class ExternalProcess : IDisposable
{
    private readonly StringBuilder _output = new();

    private ExternalProcess(Process process)
    {
        Process = process;
        process.OutputDataReceived += (_, line) => Append(line.Data);
        process.ErrorDataReceived += (_, line) => Append(line.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    public Process Process { get; }

    /// <summary>What the program printed so far.</summary>
    public string Output
    {
        get
        {
            lock (_output)
            {
                return _output.ToString();
            }
        }
    }

    /// <summary>The full path of <paramref name="name"/> on PATH (or in /usr/sbin), or null when it is not installed.</summary>
    public static string? Find(string name)
    {
        string path = Environment.GetEnvironmentVariable("PATH") ?? string.Empty;
        foreach (string directory in path.Split(':', StringSplitOptions.RemoveEmptyEntries))
        {
            string candidate = Path.Combine(directory, name);
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }

        foreach (string directory in new[] { "/usr/sbin", "/usr/bin", "/sbin" })
        {
            string candidate = Path.Combine(directory, name);
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }

        return null;
    }

    public static ExternalProcess Start(string executable, IEnumerable<string> arguments, IDictionary<string, string>? environment = null)
    {
        var start = new ProcessStartInfo(executable)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        if (environment is not null)
        {
            foreach ((string key, string value) in environment)
            {
                start.Environment[key] = value;
            }
        }

        return new ExternalProcess(Process.Start(start) ?? throw new InvalidOperationException($"{executable} did not start."));
    }

    /// <summary>A TCP port free right now on 127.0.0.1, for programs that cannot take port 0 and report it.</summary>
    public static int FreePort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }

    /// <summary>Waits until GET <paramref name="path"/> through <paramref name="target"/> answers 200 (a proxy whose backends are up).</summary>
    public static async Task WaitUntilServingAsync(EndPoint target, string path, ExternalProcess? owner = null)
    {
        using var deadline = new CancellationTokenSource(TestTimeouts.Operation);
        while (true)
        {
            if (await TryGetAsync(target, path) is { } response && response.StartsWith("HTTP/1.1 200", StringComparison.Ordinal))
            {
                return;
            }

            deadline.IsCancellationRequested.ShouldBeFalse($"{target} did not serve {path} in time. {owner?.Output}");
            await Task.Delay(50);
        }
    }

    /// <summary>One GET with <c>Connection: close</c>; the whole response as text, or null when the connection failed.</summary>
    public static async Task<string?> TryGetAsync(EndPoint target, string path)
    {
        using var socket = target is UnixDomainSocketEndPoint
            ? new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified)
            : new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
            await socket.ConnectAsync(target, timeout.Token);
            await socket.SendAsync(Encoding.ASCII.GetBytes($"GET {path} HTTP/1.1\r\nHost: falconet\r\nConnection: close\r\n\r\n"), SocketFlags.None);
            var response = new MemoryStream();
            byte[] buffer = new byte[4096];
            int received;
            while ((received = await socket.ReceiveAsync(buffer, SocketFlags.None, timeout.Token)) > 0)
            {
                response.Write(buffer, 0, received);
            }

            return Encoding.Latin1.GetString(response.ToArray());
        }
        catch (Exception exception) when (exception is SocketException or OperationCanceledException)
        {
            return null;
        }
    }

    public void Dispose()
    {
        try
        {
            if (!Process.HasExited)
            {
                Process.Kill(entireProcessTree: true);
                Process.WaitForExit(5000);
            }
        }
        catch (InvalidOperationException)
        {
        }

        Process.Dispose();
    }

    private void Append(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_output)
        {
            if (_output.Length < 64 * 1024)
            {
                _output.AppendLine(line);
            }
        }
    }
}
