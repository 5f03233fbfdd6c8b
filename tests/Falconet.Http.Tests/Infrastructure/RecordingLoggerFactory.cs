using System;
using System.Collections.Concurrent;
using System.Linq;
using Microsoft.Extensions.Logging;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// Records every message the server logs from <paramref name="minimumLevel"/> up (every level by default), so a test can see
/// how a failure was classified.
/// </summary>
internal sealed class RecordingLoggerFactory(LogLevel minimumLevel = LogLevel.Trace) : ILoggerFactory
{
    private readonly ConcurrentQueue<LogEntry> _entries = new();
    private readonly LogLevel _minimumLevel = minimumLevel;

    /// <summary>The event ids the HTTP layer logs with (see HttpLog).</summary>
    public const int BadRequest = 1;

    public const int ApplicationError = 2;

    public LogEntry[] Entries => _entries.ToArray();

    public bool Contains(int eventId) => _entries.Any(entry => entry.EventId == eventId);

    public ILogger CreateLogger(string categoryName) => new Logger(this);

    public void AddProvider(ILoggerProvider provider) => throw new NotSupportedException();

    public void Dispose()
    {
    }

    /// <summary>One logged message.</summary>
    internal sealed record LogEntry(int EventId, LogLevel Level, string Message, Exception? Exception);

    private sealed class Logger(RecordingLoggerFactory factory) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= factory._minimumLevel;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
            => factory._entries.Enqueue(new LogEntry(eventId.Id, logLevel, formatter(state, exception), exception));
    }
}
