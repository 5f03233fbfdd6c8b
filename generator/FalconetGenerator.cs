using System;
using System.Collections.Immutable;
using System.Threading;
using Falconet.Generator.Emitting;
using Falconet.Generator.Planning;
using Falconet.Generator.Schema;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Text;

namespace Falconet.Generator;

/// <summary>
/// Reads the default header schema and every AdditionalFiles item named *.headers.json. Into the Falconet runtime
/// (FalconetGenerate=Runtime) it emits KnownMethods, KnownVersions and the built-in RequestHeaders and ResponseHeaders;
/// into an app that references the runtime, the app's own header set (HeaderSet.g.cs).
/// </summary>
[Generator(LanguageNames.CSharp)]
public sealed class FalconetGenerator : IIncrementalGenerator
{
    /// <summary>The suffix that marks an AdditionalFiles item as a header schema.</summary>
    public const string SchemaFileSuffix = ".headers.json";

    /// <summary>A type of the Falconet runtime that an app's header set implements: its presence says the runtime is referenced.</summary>
    internal const string RuntimeMarkerType = "Falconet.Http.IHeaderSet";

    // No byte order mark: the emitted files are also committed under generated/ and compared as text.
    private static readonly System.Text.Encoding s_utf8 = new System.Text.UTF8Encoding(encoderShouldEmitUTF8Identifier: false);

    /// <summary>The generator version written at the top of every emitted file.</summary>
    public static readonly string Version = ReadVersion();

    /// <inheritdoc/>
    public void Initialize(IncrementalGeneratorInitializationContext context)
    {
        IncrementalValueProvider<GeneratorOptions> options = context.AnalyzerConfigOptionsProvider
            .Select(static (provider, _) => ReadOptions(provider.GlobalOptions))
            .WithTrackingName(TrackingNames.Options);

        IncrementalValuesProvider<SchemaFile> files = context.AdditionalTextsProvider
            .Where(static text => IsSchemaFile(text.Path))
            .Select(static (text, cancellationToken) => ReadFile(text, cancellationToken))
            .WithTrackingName(TrackingNames.Schema);

        IncrementalValuesProvider<DiagnosticInfo> misnamed = context.AdditionalTextsProvider
            .Where(static text => !IsSchemaFile(text.Path) && IsJsonFile(text.Path))
            .Select(static (text, cancellationToken) => CheckMisnamed(text, cancellationToken))
            .Where(static diagnostic => diagnostic is not null)
            .Select(static (diagnostic, _) => diagnostic!)
            .WithTrackingName(TrackingNames.MisnamedFiles);

        IncrementalValueProvider<bool> runtimeReferenced = context.CompilationProvider
            .Select(static (compilation, _) => compilation.GetTypeByMetadataName(RuntimeMarkerType) is not null)
            .WithTrackingName(TrackingNames.Runtime);

        IncrementalValueProvider<SchemaResult> model = files.Collect()
            .Combine(options.Select(static (o, _) => o.Runtime))
            .Select(static (pair, _) => Merge(pair.Left, userMethods: pair.Right))
            .WithTrackingName(TrackingNames.Model);

        IncrementalValueProvider<PlanResult> plan = model
            .Select(static (result, _) => result.Model)
            .Combine(options)
            .Select(static (pair, _) => CreatePlan(pair.Left, pair.Right))
            .WithTrackingName(TrackingNames.Plan);

        IncrementalValueProvider<EquatableArray<DiagnosticInfo>> diagnostics = model
            .Combine(options)
            .Combine(runtimeReferenced)
            .Combine(misnamed.Collect())
            .Select(static (all, _) => CollectDiagnostics(all.Left.Left.Left, all.Left.Left.Right, all.Left.Right, all.Right))
            .WithTrackingName(TrackingNames.Diagnostics);

        context.RegisterSourceOutput(diagnostics, static (output, items) =>
        {
            foreach (DiagnosticInfo item in items)
            {
                output.ReportDiagnostic(item.ToDiagnostic());
            }
        });

        context.RegisterSourceOutput(plan.Combine(runtimeReferenced), static (output, pair) => Emit(output, pair.Left, pair.Right));
    }

    private static bool IsSchemaFile(string path) => path.EndsWith(SchemaFileSuffix, StringComparison.OrdinalIgnoreCase);

    private static bool IsJsonFile(string path) =>
        path.EndsWith(".json", StringComparison.OrdinalIgnoreCase) || path.EndsWith(".jsonc", StringComparison.OrdinalIgnoreCase);

    // A JSON file with the schema's own properties, or pointing at its JSON Schema, was meant as a header schema.
    private static DiagnosticInfo? CheckMisnamed(AdditionalText text, CancellationToken cancellationToken)
    {
        string content = text.GetText(cancellationToken)?.ToString() ?? string.Empty;
        bool looksLikeSchema = content.Contains("\"requestHeaders\"") || content.Contains("\"responseHeaders\"")
            || content.Contains("known-headers.schema.json");
        return looksLikeSchema
            ? DiagnosticInfo.Create(DiagnosticDescriptors.MisnamedSchemaFile, new LocationInfo(text.Path, 0, 0, 0, 0, 0, 0), SchemaMerger.FileName(text.Path))
            : null;
    }

    private static EquatableArray<DiagnosticInfo> CollectDiagnostics(SchemaResult model, GeneratorOptions options, bool runtimeReferenced, ImmutableArray<DiagnosticInfo> misnamed)
    {
        ImmutableArray<DiagnosticInfo> all = model.Diagnostics.AsImmutableArray().AddRange(options.Diagnostics).AddRange(misnamed);
        if (!options.Runtime && model.Model.UserFiles > 0 && !runtimeReferenced)
        {
            all = all.Add(DiagnosticInfo.Create(DiagnosticDescriptors.RuntimeNotReferenced, LocationInfo.None));
        }

        return EquatableArray.From(all);
    }

    private static SchemaFile ReadFile(AdditionalText text, CancellationToken cancellationToken)
    {
        try
        {
            SourceText? source = text.GetText(cancellationToken);
            return SchemaReader.Read(text.Path, source?.ToString() ?? string.Empty);
        }
        catch (Exception exception) when (exception is not OperationCanceledException)
        {
            var failure = DiagnosticInfo.Create(DiagnosticDescriptors.InternalError, new LocationInfo(text.Path, 0, 0, 0, 0, 0, 0), "reading " + text.Path, exception.Message);
            return new SchemaFile(text.Path, default, default, default, default, EquatableArray.From(new[] { failure }));
        }
    }

    private static SchemaResult Merge(ImmutableArray<SchemaFile> userFiles, bool userMethods)
    {
        try
        {
            return SchemaMerger.Merge(DefaultSchema.File, userFiles, userMethods);
        }
        catch (Exception exception) when (exception is not OperationCanceledException)
        {
            var empty = new SchemaModel(default, default, default, default, userFiles.Length);
            return new SchemaResult(empty, EquatableArray.From(new[] { Failure("merging the header schemas", exception) }));
        }
    }

    private static PlanResult CreatePlan(SchemaModel model, GeneratorOptions options)
    {
        try
        {
            return new PlanResult(GenerationPlanner.Plan(model, options, Version), null);
        }
        catch (Exception exception) when (exception is not OperationCanceledException)
        {
            return new PlanResult(null, Failure("planning the matchers", exception));
        }
    }

    private static void Emit(SourceProductionContext output, PlanResult result, bool runtimeReferenced)
    {
        if (result.Failure is not null)
        {
            output.ReportDiagnostic(result.Failure.ToDiagnostic());
            return;
        }

        // An app's header set is emitted only from its own schema files, and only where it can compile (FALC018 says why not).
        if (!result.Plan!.Options.Runtime && (result.Plan.UserFiles == 0 || !runtimeReferenced))
        {
            return;
        }

        try
        {
            foreach (EmittedFile file in Emitter.Emit(result.Plan!))
            {
                output.AddSource(file.HintName, SourceText.From(file.Text, s_utf8));
            }
        }
        catch (Exception exception) when (exception is not OperationCanceledException)
        {
            output.ReportDiagnostic(Failure("emitting the source files", exception).ToDiagnostic());
        }
    }

    /// <summary>Reads FalconetNamespace (else RootNamespace, else Falconet.Generated), FalconetVisibility and FalconetGenerate.</summary>
    internal static GeneratorOptions ReadOptions(AnalyzerConfigOptions options)
    {
        var diagnostics = ImmutableArray.CreateBuilder<DiagnosticInfo>();
        string ns = GeneratorOptions.DefaultNamespace;
        if (options.TryGetValue("build_property.FalconetNamespace", out string? configured) && !string.IsNullOrWhiteSpace(configured))
        {
            if (IsNamespace(configured.Trim()))
            {
                ns = configured.Trim();
            }
            else
            {
                diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.InvalidOption, LocationInfo.None, "FalconetNamespace", configured, "using " + ns));
            }
        }
        else if (options.TryGetValue("build_property.RootNamespace", out string? root) && !string.IsNullOrWhiteSpace(root) && IsNamespace(root.Trim()))
        {
            ns = root.Trim();
        }

        string visibility = "public";
        if (options.TryGetValue("build_property.FalconetVisibility", out string? configuredVisibility) && !string.IsNullOrWhiteSpace(configuredVisibility))
        {
            string value = configuredVisibility.Trim();
            if (string.Equals(value, "internal", StringComparison.OrdinalIgnoreCase))
            {
                visibility = "internal";
            }
            else if (!string.Equals(value, "public", StringComparison.OrdinalIgnoreCase))
            {
                diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.InvalidOption, LocationInfo.None, "FalconetVisibility", configuredVisibility, "using public"));
            }
        }

        bool runtime = false;
        if (options.TryGetValue("build_property.FalconetGenerate", out string? generate) && !string.IsNullOrWhiteSpace(generate))
        {
            string value = generate.Trim();
            if (string.Equals(value, "Runtime", StringComparison.OrdinalIgnoreCase))
            {
                runtime = true;
            }
            else if (!string.Equals(value, "HeaderSet", StringComparison.OrdinalIgnoreCase))
            {
                diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.InvalidOption, LocationInfo.None, "FalconetGenerate", generate, "using HeaderSet"));
            }
        }

        return new GeneratorOptions(ns, visibility, runtime, new EquatableArray<DiagnosticInfo>(diagnostics.ToImmutable()));
    }

    private static bool IsNamespace(string text)
    {
        foreach (string part in text.Split('.'))
        {
            if (!SyntaxFacts.IsValidIdentifier(part) || SyntaxFacts.GetKeywordKind(part) != SyntaxKind.None)
            {
                return false;
            }
        }

        return true;
    }

    private static DiagnosticInfo Failure(string step, Exception exception) =>
        DiagnosticInfo.Create(DiagnosticDescriptors.InternalError, LocationInfo.None, step, exception.GetType().Name + ": " + exception.Message);

    private static string ReadVersion()
    {
        Version? version = typeof(FalconetGenerator).Assembly.GetName().Version;
        return version is null ? "0.0.0" : version.ToString(3);
    }

    /// <summary>A plan, or the diagnostic that explains why none could be made.</summary>
    private sealed record PlanResult(GenerationPlan? Plan, DiagnosticInfo? Failure);
}
