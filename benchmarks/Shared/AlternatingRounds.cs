using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Numerics;

namespace Falconet.Benchmarks;

/// <summary>
/// Measures several variants of one operation in alternating short rounds inside one process, so that load from other
/// processes on a shared machine lands on every variant alike: the fastest round of each shows the code, the median how it
/// fares under that load. A checksum of the results keeps the work from being optimized away.
/// </summary>
internal static class AlternatingRounds
{
    /// <summary>One variant's figures: nanoseconds per operation in its fastest and its median round, bytes it allocated.</summary>
    public readonly record struct Result(string Name, double Fastest, double Median, long AllocatedBytes);

    /// <summary>
    /// Warms every variant up with <paramref name="warmUpOperations"/> operations, then runs <paramref name="rounds"/> rounds
    /// of <paramref name="operationsPerRound"/> operations each.
    /// </summary>
    /// <typeparam name="T">What an operation returns: generic, so a benchmark method binds as the delegate itself, with no wrapper call.</typeparam>
    public static Result[] Run<T>(IReadOnlyList<(string Name, Func<T> Operation)> variants, int rounds, int operationsPerRound, out long checksum,
        int warmUpOperations = 50_000)
        where T : IBinaryInteger<T>
    {
        checksum = 0;
        for (int i = 0; i < warmUpOperations; i++)
        {
            foreach ((_, Func<T> operation) in variants)
            {
                checksum += long.CreateTruncating(operation());
            }
        }

        var times = new double[variants.Count][];
        var allocated = new long[variants.Count];
        for (int v = 0; v < variants.Count; v++)
        {
            times[v] = new double[rounds];
        }

        for (int round = 0; round < rounds; round++)
        {
            for (int v = 0; v < variants.Count; v++)
            {
                Func<T> operation = variants[v].Operation;
                long before = GC.GetAllocatedBytesForCurrentThread();
                long start = Stopwatch.GetTimestamp();
                for (int i = 0; i < operationsPerRound; i++)
                {
                    checksum += long.CreateTruncating(operation());
                }

                times[v][round] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / operationsPerRound;
                allocated[v] += GC.GetAllocatedBytesForCurrentThread() - before;
            }
        }

        var results = new Result[variants.Count];
        for (int v = 0; v < variants.Count; v++)
        {
            Array.Sort(times[v]);
            results[v] = new Result(variants[v].Name, times[v][0], times[v][rounds / 2], allocated[v]);
        }

        return results;
    }
}
