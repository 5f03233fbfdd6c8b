using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.IO;
using System.Linq;
using System.Net.Security;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>Helpers for the TLS fault tests: a genuine ClientHello to replay by hand, and what the server logged and counted.</summary>
internal static class TlsProbe
{
    /// <summary>The ClientHello a .NET client sends for <paramref name="hostName"/>: the first flight, captured without a server.</summary>
    public static async Task<byte[]> CaptureClientHelloAsync(string hostName = "localhost")
    {
        var capture = new FirstWriteCapture();
        var ssl = new SslStream(capture);
        using var stop = new CancellationTokenSource();
        Task handshake = ssl.AuthenticateAsClientAsync(TestCertificates.ClientOptions(hostName), stop.Token);
        byte[] hello = await capture.FirstWrite.WaitAsync(TestTimeouts.Operation);
        await stop.CancelAsync();
        await Should.ThrowAsync<Exception>(handshake);
        await ssl.DisposeAsync();
        return hello;
    }

    /// <summary>Waits until the server logged the failed handshake (event 400) with <paramref name="reason"/>.</summary>
    public static async Task WaitForFailedHandshakeAsync(RecordingLoggerFactory logs, string reason)
    {
        string expected = $"failed ({reason})";
        for (int i = 0; i < 500; i++)
        {
            if (logs.Entries.Any(entry => entry.EventId == 400 && entry.Message.Contains(expected, StringComparison.Ordinal)))
            {
                logs.Entries.First(entry => entry.EventId == 400).Level.ShouldBe(Microsoft.Extensions.Logging.LogLevel.Debug);
                return;
            }

            await Task.Delay(10);
        }

        string seen = string.Join(Environment.NewLine, logs.Entries.Select(entry => $"{entry.EventId}: {entry.Message}"));
        throw new ShouldAssertException($"No failed handshake logged with reason {reason}. Logged:{Environment.NewLine}{seen}");
    }

    /// <summary>A stream that records the first write and whose reads never complete (until cancelled).</summary>
    private sealed class FirstWriteCapture : Stream
    {
        private readonly TaskCompletionSource<byte[]> _first = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task<byte[]> FirstWrite => _first.Task;

        public override bool CanRead => true;

        public override bool CanWrite => true;

        public override bool CanSeek => false;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            _first.TrySetResult(buffer.ToArray());
            return default;
        }

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            await Task.Delay(Timeout.Infinite, cancellationToken);
            return 0;
        }

        public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public override void Flush()
        {
        }

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => _first.TrySetResult(buffer.AsSpan(offset, count).ToArray());

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();
    }
}

/// <summary>Listens to the <c>Falconet.Server</c> meter's TLS instruments (process-wide: other tests' handshakes count too).</summary>
internal sealed class TlsMetricsListener : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<string, long> _failures = new();
    private readonly ConcurrentQueue<(double Seconds, string? Version)> _durations = new();

    public TlsMetricsListener()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == ServerMetrics.MeterName
                && instrument.Name is ServerMetrics.FailedTlsHandshakesName or ServerMetrics.TlsHandshakeDurationName)
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            string reason = Tag(tags, ServerMetrics.ReasonTag) ?? "";
            _failures.AddOrUpdate(reason, value, (_, total) => total + value);
        });
        _listener.SetMeasurementEventCallback<double>((_, value, tags, _) => _durations.Enqueue((value, Tag(tags, ServerMetrics.TlsProtocolVersionTag))));
        _listener.Start();
    }

    public long Failures(string reason) => _failures.TryGetValue(reason, out long count) ? count : 0;

    public IReadOnlyCollection<(double Seconds, string? Version)> Durations => _durations.ToArray();

    public void Dispose() => _listener.Dispose();

    private static string? Tag(ReadOnlySpan<KeyValuePair<string, object?>> tags, string name)
    {
        foreach (KeyValuePair<string, object?> tag in tags)
        {
            if (tag.Key == name)
            {
                return tag.Value as string;
            }
        }

        return null;
    }
}
