using System;
using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace Falconet.AspNetCore.Tests.Infrastructure;

/// <summary>Keeps every log entry of the application: category, event id, level, message and exception.</summary>
internal sealed class CapturingLoggerProvider : ILoggerProvider
{
    public ConcurrentQueue<LogEntry> Entries { get; } = new();

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void Dispose()
    {
    }

    public sealed record LogEntry(string Category, int EventId, LogLevel Level, string Message, Exception? Exception);

    private sealed class Logger(CapturingLoggerProvider provider, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
            => provider.Entries.Enqueue(new LogEntry(category, eventId.Id, logLevel, formatter(state, exception), exception));
    }
}
