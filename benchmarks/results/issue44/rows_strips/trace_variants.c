#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <math.h>
#include <time.h>
static double now(){struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t); return t.tv_sec+1e-9*t.tv_nsec;}
__attribute__((noinline)) double tr_plain(const double *restrict A, const double *restrict B, int64_t n){
  double acc=0;
  for (int64_t k=0;k<n;++k){
    #pragma omp simd reduction(+:acc)
    for (int64_t a=0;a<n;++a) acc = fma(A[k*n+a], B[a*n+k], acc);
  }
  return acc;
}
__attribute__((noinline)) double tr_tiled(const double *restrict A, const double *restrict B, int64_t n){
  double acc=0;
  for (int64_t kb=0;kb<n/8;++kb){
    for (int64_t a=0;a<n;++a){
      #pragma omp simd reduction(+:acc)
      for (int64_t k=0;k<8;++k) acc = fma(A[(8*kb+k)*n+a], B[a*n+8*kb+k], acc);
    }
  }
  return acc;
}
__attribute__((noinline)) double tr_tiled2(const double *restrict A, const double *restrict B, int64_t n){
  /* vector over a within 8x8 blocks, B strided */
  double acc=0;
  for (int64_t kb=0;kb<n/8;++kb){
    for (int64_t ab=0;ab<n/8;++ab){
      for (int64_t k=0;k<8;++k){
      #pragma omp simd reduction(+:acc)
      for (int64_t a=0;a<8;++a) acc = fma(A[(8*kb+k)*n+8*ab+a], B[(8*ab+a)*n+8*kb+k], acc);
      }
    }
  }
  return acc;
}
__attribute__((noinline)) double tr_tiled3(const double *restrict A, const double *restrict B, int64_t n){
  /* 8-row strip of A, vector over a, B strided: B rows a.. within strip columns */
  double acc=0;
  for (int64_t kb=0;kb<n/8;++kb){
    for (int64_t k=0;k<8;++k){
      #pragma omp simd reduction(+:acc)
      for (int64_t a=0;a<n;++a) acc = fma(A[(8*kb+k)*n+a], B[a*n+8*kb+k], acc);
    }
  }
  return acc;
}
__attribute__((noinline)) double tr_dot(const double *restrict A, const double *restrict B, int64_t n){
  double acc=0;
  #pragma omp simd reduction(+:acc)
  for (int64_t a=0;a<n*n;++a) acc = fma(A[a], B[a], acc);
  return acc;
}

__attribute__((noinline)) double tr_pf(const double *restrict A, const double *restrict B, int64_t n){
  double acc=0;
  for (int64_t kb=0;kb<n/8;++kb){
    for (int64_t a=0;a<n;++a){
      __builtin_prefetch(&B[(a+12)*n+8*kb]);
      #pragma omp simd reduction(+:acc)
      for (int64_t k=0;k<8;++k) acc = fma(A[(8*kb+k)*n+a], B[a*n+8*kb+k], acc);
    }
  }
  return acc;
}
__attribute__((noinline)) double tr_outer(const double *restrict A, const double *restrict B, int64_t n){
  double acc=0;
  for (int64_t kb=0;kb<n/8;++kb){
    #pragma omp simd reduction(+:acc)
    for (int64_t k=0;k<8;++k){
      for (int64_t a=0;a<n;++a) acc = fma(A[(8*kb+k)*n+a], B[a*n+8*kb+k], acc);
    }
  }
  return acc;
}
__attribute__((noinline)) double tr_outer16(const double *restrict A, const double *restrict B, int64_t n){
  double acc=0;
  for (int64_t kb=0;kb<n/16;++kb){
    #pragma omp simd reduction(+:acc)
    for (int64_t k=0;k<16;++k){
      for (int64_t a=0;a<n;++a) acc = fma(A[(16*kb+k)*n+a], B[a*n+16*kb+k], acc);
    }
  }
  return acc;
}
int main(int argc,char**argv){
  int64_t n=atoi(argv[1]);
  double *A=aligned_alloc(64,n*n*8),*B=aligned_alloc(64,n*n*8);
  for(int64_t i=0;i<n*n;++i){A[i]=(i%7)*0.1;B[i]=(i%5)*0.1;}
  double (*f[])(const double*,const double*,int64_t)={tr_plain,tr_tiled,tr_pf,tr_outer,tr_outer16,tr_dot};
  const char*nm[]={"plain","tiled(k inner, gather A)","tiled + prefetch B","outer simd 8","outer simd 16","dot(bound)"};
  int reps = 2e8/(n*n)+1;
  double best[8]={1e9,1e9,1e9,1e9,1e9,1e9,1e9,1e9}; double ss=0; for(int r=0;r<9;++r) for(int v=0;v<6;++v){ double s=0,t=now(); for(int i=0;i<reps;++i) s+=f[v](A,B,n); t=(now()-t)/reps; if(t<best[v])best[v]=t; ss=s;}
  for(int v=0;v<6;++v){double t=best[v],s=ss*reps; printf("n=%ld %-26s %9.2f us %6.1f GB/s %g\n",n,nm[v],t*1e6,16.0*n*n/t/1e9,s/reps);}
}
