using System;
using System.Globalization;
using System.Text;
using System.Threading;
using Falconet.Timekeeping;
using Microsoft.Extensions.Primitives;

namespace Falconet.Http;

/// <summary>
/// The Date header value shared by every connection: formatted once a second on the process's ticker thread (RFC 1123,
/// "r"), so a response sets it by reference without formatting or allocating.
/// </summary>
public static class DateHeaderValues
{
    private static readonly Lock s_gate = new();
    private static Snapshot s_current = Snapshot.Create(DateTimeOffset.UtcNow);
    private static readonly Action s_refresh = Refresh;
    private static int s_users;

    /// <summary>The current value as a header value (a shared string).</summary>
    public static StringValues Value => Volatile.Read(ref s_current).Value;

    /// <summary>The current value as ASCII bytes ("Sun, 06 Nov 1994 08:49:37 GMT").</summary>
    public static ReadOnlySpan<byte> Bytes => Volatile.Read(ref s_current).Bytes;

    /// <summary>The current value as a string.</summary>
    public static string Text => Volatile.Read(ref s_current).Text;

    /// <summary>Starts the once-a-second refresh (reference counted: one for every running server).</summary>
    public static void Acquire()
    {
        lock (s_gate)
        {
            if (s_users++ == 0)
            {
                Refresh();
                SecondTicker.Subscribe(s_refresh);
            }
        }
    }

    /// <summary>Stops the refresh once the last user releases it.</summary>
    public static void Release()
    {
        lock (s_gate)
        {
            if (s_users > 0 && --s_users == 0)
            {
                SecondTicker.Unsubscribe(s_refresh);
            }
        }
    }

    /// <summary>Formats the current time now (the ticker calls this once a second).</summary>
    internal static void Refresh()
    {
        DateTimeOffset now = DateTimeOffset.UtcNow;
        Snapshot current = Volatile.Read(ref s_current);
        if (current.Second != now.ToUnixTimeSeconds())
        {
            Volatile.Write(ref s_current, Snapshot.Create(now));
        }
    }

    private sealed class Snapshot
    {
        private Snapshot(long second, string text)
        {
            Second = second;
            Text = text;
            Value = new StringValues(text);
            Bytes = Encoding.ASCII.GetBytes(text);
        }

        public long Second { get; }

        public string Text { get; }

        public StringValues Value { get; }

        public byte[] Bytes { get; }

        public static Snapshot Create(DateTimeOffset now)
            => new(now.ToUnixTimeSeconds(), now.ToString("r", CultureInfo.InvariantCulture));
    }
}
