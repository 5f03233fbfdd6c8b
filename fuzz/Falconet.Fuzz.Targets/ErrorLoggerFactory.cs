using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using Microsoft.Extensions.Logging;

namespace Falconet.Fuzz;

/// <summary>Keeps the log events a fuzzed connection must never raise: an exception that escaped, an application failure, an abort.</summary>
internal sealed class ErrorLoggerFactory : ILoggerFactory
{
    // HttpLog: 2 the application failed, 3 an exception ended the connection, 4 aborted after the response started.
    private static readonly HashSet<int> s_errorEvents = [2, 3, 4];

    private readonly List<LoggedError> _errors = [];
    private readonly Lock _gate = new();

    /// <summary>The error events logged since the last <see cref="Clear"/>, with their exceptions.</summary>
    public IReadOnlyList<string> Errors
    {
        get
        {
            lock (_gate)
            {
                return [.. _errors.Select(error => error.Text)];
            }
        }
    }

    /// <summary>The error events logged since the last <see cref="Clear"/>, with their event ids and exceptions.</summary>
    public IReadOnlyList<LoggedError> ErrorEvents
    {
        get
        {
            lock (_gate)
            {
                return [.. _errors];
            }
        }
    }

    public void Clear()
    {
        lock (_gate)
        {
            _errors.Clear();
        }
    }

    public ILogger CreateLogger(string categoryName) => new Logger(this);

    public void AddProvider(ILoggerProvider provider) => throw new NotSupportedException();

    public void Dispose()
    {
    }

    private sealed class Logger(ErrorLoggerFactory owner) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Debug;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (s_errorEvents.Contains(eventId.Id) || logLevel >= LogLevel.Error)
            {
                lock (owner._gate)
                {
                    owner._errors.Add(new LoggedError(eventId.Id, $"{eventId.Id} {formatter(state, exception)} {exception}", exception));
                }
            }
        }
    }
}

/// <summary>One error event: its id, its text with the exception, and the exception.</summary>
internal sealed record LoggedError(int EventId, string Text, Exception? Exception);
